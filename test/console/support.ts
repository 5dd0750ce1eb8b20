// The console's browser tests: Debian's Chromium driven by playwright-core, a gateway with the console in front of
// the mock upstream, axe-core run in the page, screenshots and measurements written to a gitignored folder.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, KEY_B, UPSTREAM_KEY } from '../support/fixture.js'
import { listen, type MountedServer } from '../support/http.js'
import { expressApp, koaApp } from '../support/servers.js'

/** The Chromium the tests drive: `CHROMIUM_PATH`, else Debian's package. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (candidate): candidate is string => typeof candidate === 'string' && existsSync(candidate),
)

/** Where screenshots and measurements go (gitignored). */
export const ARTIFACTS = path.resolve(import.meta.dirname, 'artifacts')

export const ADMIN_KEY = 'console-admin-key-0123'
export const ANSWER = 'The kept answer the client never got.'

/** The gateway's options: two owners, a priced model with a cost limit, the console with an admin key. */
export function consoleOptions(mockUrl: string): GatewayOptions {
  return {
    upstreams: { mock: { type: 'openai', baseUrl: `${mockUrl}/v1`, apiKey: UPSTREAM_KEY } },
    models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
    auth: { apiKeys: [KEY_A, KEY_B] },
    pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
    limits: { owners: { costPerDay: 5 } },
    console: { adminKeys: [ADMIN_KEY] },
    logger: { warn() {}, error: (...line: unknown[]) => console.error(...line) },
  }
}

/** A mock upstream and a gateway with the console, mounted at `/ai` by `mount`. */
export interface ConsoleChain {
  mock: MockUpstream
  gateway: Gateway
  server: MountedServer
  /** The gateway's root: `http://127.0.0.1:PORT/ai`. */
  url: string
  close(): Promise<void>
}

/** How the gateway is mounted under `/ai`. */
export type Mount = 'node' | 'express' | 'koa'

export async function startConsoleChain(mount: Mount): Promise<ConsoleChain> {
  const mock = await startMockUpstream()
  const gateway = createGateway(consoleOptions(mock.url))
  const handler =
    mount === 'node'
      ? nodeHandler(gateway, { prefix: '/ai' })
      : mount === 'express'
        ? expressApp(gateway, { at: '/ai' })
        : koaApp(gateway, { prefix: '/ai' }).callback()
  const server = await listen(http.createServer(handler as http.RequestListener), '/ai')
  return {
    mock,
    gateway,
    server,
    url: server.url,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
}

/** A page that fails the test on a CSP violation or a script error. */
export async function newPage(browser: Browser, width = 1200): Promise<{ page: Page; problems: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error' && !/the server responded with a status of (401|403|404)/.test(message.text())) {
      problems.push(`console error: ${message.text()}`)
    }
  })
  return { page, problems, close: () => context.close() }
}

export async function signIn(page: Page, consoleUrl: string, key: string): Promise<void> {
  await page.goto(consoleUrl)
  await page.getByLabel('Key').fill(key)
  await page.getByLabel('Key').press('Enter')
  await expect.poll(() => page.locator('#sign-in').isHidden()).toBe(true)
}

/** Saves a screenshot of the page as it is now. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true })
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** Runs axe-core in the page (through the debugger, so the page's CSP stays as it is); the serious and critical findings. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> }> }
      }
    ).axe
    const result = await axe.run()
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, count: v.nodes.length }))
  })
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.count}): ${v.help}`)
}

/** Writes one measurement file. */
export function saveMeasure(name: string, value: unknown): void {
  mkdirSync(ARTIFACTS, { recursive: true })
  writeFileSync(path.join(ARTIFACTS, `${name}.json`), `${JSON.stringify(value, null, 2)}\n`)
}
