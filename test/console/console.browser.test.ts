import type { Browser, Page, Response } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usd } from '../../src/console/api.js'
import { ownerId } from '../../src/index.js'
import { bearer, KEY_A, KEY_B } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import {
  ADMIN_KEY,
  ANSWER,
  CHROMIUM,
  type ConsoleChain,
  launch,
  newPage,
  saveMeasure,
  screenshot,
  seriousViolations,
  signIn,
  startConsoleChain,
} from './support.js'

// The console in a real browser: Debian's Chromium, headless, driven by playwright-core. Skipped only where no
// Chromium is installed (CI installs the `chromium` package first).

const chat = (content: string, mock: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  mock,
})
const A = ownerId({ apiKey: KEY_A })
const B = ownerId({ apiKey: KEY_B })

/** A call cut by its client while the upstream still works on it: the gateway keeps the answer. */
async function cutCall(url: string, key: string, content: string): Promise<string> {
  const body = JSON.stringify(chat(content, { delay_ms: 400, content: ANSWER }))
  await sendThenAbort(`${url}/v1/chat/completions`, { headers: bearer(key), body, afterMs: 50 })
  const listed = await eventually(async () => {
    const res = await call(`${url}/v1/recoveries`, { headers: bearer(key) })
    return res.json.items.length > 0 ? res.json.items : undefined
  })
  return listed[0].request_id as string
}

/** Every JSON body the page received, to check that nothing of another owner reached it. */
function recordBodies(page: Page): string[] {
  const bodies: string[] = []
  page.on('response', (response: Response) => {
    if (/json|event-stream/.test(response.headers()['content-type'] ?? '')) {
      response.text().then(
        (text) => bodies.push(text),
        () => {},
      )
    }
  })
  return bodies
}

if (!CHROMIUM) {
  console.warn(
    "[console browser tests] skipped: no Chromium at /usr/bin/chromium; install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH.",
  )
}

describe.skipIf(!CHROMIUM)('the console in Chromium (node:http at /ai)', () => {
  let browser: Browser
  let chain: ConsoleChain
  let consoleUrl: string
  beforeAll(async () => {
    ;[browser, chain] = await Promise.all([launch(), startConsoleChain('node')])
    consoleUrl = `${chain.url}/console/`
  })
  afterAll(async () => {
    await browser?.close()
    await chain?.close()
  })

  it('says clearly when a key is wrong', async () => {
    const { page, close } = await newPage(browser)
    await page.goto(consoleUrl)
    await page.getByLabel('Key').fill('sk-not-a-key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toMatch(/not accepted: it is neither an API key/)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await screenshot(page, 'sign-in-wrong-key')
    expect(await seriousViolations(page)).toEqual([])
    await close()
  })

  it('finds a kept answer by body, by hash and in the list, reads it, and deletes it', async () => {
    const content = 'a question whose answer was cut'
    const requestId = await cutCall(chain.url, KEY_A, content)
    const { page, problems, close } = await newPage(browser)
    await signIn(page, consoleUrl, KEY_A)
    // The key stays in this tab's storage, never in the address.
    expect(await page.evaluate(() => sessionStorage.getItem('model-gateway-console-key'))).toBe(KEY_A)
    expect(page.url()).not.toContain(KEY_A)
    await expect.poll(() => page.locator('#recoveries-list').textContent()).toContain(requestId)
    await screenshot(page, 'recoveries')
    expect(await seriousViolations(page)).toEqual([])

    // By the body pasted as sent (the gateway hashes it), then by its hash.
    await page.getByLabel(/Find by request body/).fill(JSON.stringify(chat(content, { delay_ms: 400, content: ANSWER })))
    await page.getByRole('button', { name: 'Search' }).click()
    await expect.poll(() => page.locator('#recoveries-list').textContent()).toMatch(/Records of this body: 1 record/)
    const hash = (await call(`${chain.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })).json.request_body_hash
    await page.getByLabel(/Find by request body/).fill(hash)
    await page.getByRole('button', { name: 'Search' }).click()
    await expect.poll(() => page.locator('#recoveries-list').textContent()).toContain(`Records with hash ${hash}: 1 record`)

    await page.getByRole('button', { name: `View record ${requestId}` }).click()
    await expect.poll(() => page.locator('#answer-text').textContent()).toBe(ANSWER)
    await screenshot(page, 'recovery-detail')
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Delete this record' }).click()
    await expect.poll(() => page.locator('#status').textContent()).toContain(`Record ${requestId} deleted.`)
    expect((await call(`${chain.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })).status).toBe(404)

    // Delete-all shows its dry-run count first.
    await cutCall(chain.url, KEY_A, 'another one')
    await page.getByRole('button', { name: 'Show all' }).click()
    await page.getByRole('button', { name: 'Delete all...' }).click()
    await expect.poll(() => page.locator('#delete-all-confirm').textContent()).toContain('1 record(s) would be deleted')
    await page.getByRole('button', { name: 'Delete 1 record(s)' }).click()
    await expect.poll(() => page.locator('#status').textContent()).toContain('1 record(s) deleted.')
    expect((await call(`${chain.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json.items).toEqual([])
    expect(problems).toEqual([])
    await close()
  })

  it('cancels a background response, after showing its events so far', async () => {
    const created = await call(`${chain.url}/v1/responses`, {
      headers: bearer(KEY_A),
      body: { model: 'gpt-4o-mini', input: 'take your time', background: true, mock: { chunks: 50, chunk_delay_ms: 200 } },
    })
    expect(created.status).toBe(200)
    const { page, problems, close } = await newPage(browser)
    await signIn(page, consoleUrl, KEY_A)
    await page.getByRole('link', { name: 'Background' }).click()
    await expect.poll(() => page.locator('#background-list').textContent()).toMatch(/in_progress|queued/)
    await page.getByRole('button', { name: `Events of ${created.json.id}` }).click()
    await expect.poll(async () => page.locator('#background-events li').count()).toBeGreaterThan(2)
    await screenshot(page, 'background')
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole('button', { name: `Cancel ${created.json.id}` }).click()
    await expect.poll(() => page.locator('#status').textContent()).toContain(`Response ${created.json.id} is cancelled.`)
    await expect.poll(() => page.locator('#background-list').textContent()).toContain('cancelled')
    const retrieved = await call(`${chain.url}/v1/responses/${created.json.id}`, { headers: bearer(KEY_A) })
    expect(retrieved.json.status).toBe('cancelled')
    expect(problems).toEqual([])
    await close()
  })

  it('shows a running call appear and finish, live', async () => {
    const { page, problems, close } = await newPage(browser)
    await signIn(page, consoleUrl, KEY_A)
    await page.getByRole('link', { name: 'Running calls' }).click()
    await expect.poll(() => page.locator('#calls-live').textContent()).toContain('0 call(s) running now')
    const running = call(`${chain.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: { ...chat('stream slowly', { chunks: 20, chunk_delay_ms: 150 }), stream: true },
    })
    await expect.poll(() => page.locator('#calls-list').textContent()).toContain('gpt-4o-mini')
    await expect.poll(() => page.locator('#calls-list').textContent()).toMatch(/chat\.completions \(stream\)/)
    // Its bytes so far grow as the stream goes (the picture is sent again every second).
    await expect.poll(() => page.locator('#calls-list td.num').nth(1).textContent()).toMatch(/^(?:[1-9]\d* B|[\d.]+ KiB)$/)
    await screenshot(page, 'running-calls')
    expect(await seriousViolations(page)).toEqual([])
    expect((await running).status).toBe(200)
    await expect.poll(() => page.locator('#calls-list').textContent()).toContain('No call running now.')
    expect(problems).toEqual([])
    await close()
  })

  it("shows today's usage, whose cost is gateway.usage's, on a phone-sized screen", async () => {
    for (let i = 0; i < 2; i++) await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chat('count me') })
    const { page, problems, close } = await newPage(browser, 390)
    await signIn(page, consoleUrl, KEY_A)
    await page.getByRole('link', { name: 'Usage' }).click()
    const windows = await eventually(async () => {
      const now = await chain.gateway.usage(A)
      return now.cost > 0 ? now : undefined
    })
    await expect.poll(() => page.locator('#today-cost').textContent()).toBe(`$${usd(windows.cost)}`)
    expect(await page.locator('#today-cost').textContent()).toMatch(/^\$\d+\.\d{2,}$/)
    expect(await page.locator('#usage-chart svg rect.bar').count()).toBe(30)
    await expect.poll(() => page.locator('#usage-limits').textContent()).toContain('Cost per day (USD)')
    // Nothing wider than the phone's screen but the tables, which scroll in their own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await screenshot(page, 'usage-phone')
    expect(await seriousViolations(page)).toEqual([])
    // Keyboard only: the sections are links reached with Tab, opened with Enter.
    await page.locator('nav a[data-view="recoveries"]').focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => page.locator('#view-recoveries').isVisible()).toBe(true)
    expect(problems).toEqual([])
    await close()
  })

  it("never shows owner B anything of owner A's, in the page or in what it fetched; an admin sees both", async () => {
    await cutCall(chain.url, KEY_A, 'private to A')
    await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_B), body: chat('B was here') })
    const stopHanging = new AbortController()
    const hanging = call(`${chain.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      // A stream: its upstream call is aborted with its client at the end.
      body: { ...chat('slow A', { hang: true }), stream: true },
      signal: stopHanging.signal,
    }).catch(() => undefined)
    const { page, problems, close } = await newPage(browser)
    const bodies = recordBodies(page)
    await signIn(page, consoleUrl, KEY_B)
    await expect.poll(() => page.locator('#recoveries-list').textContent()).toContain('no records')
    for (const view of ['Background', 'Running calls', 'Usage']) {
      await page.getByRole('link', { name: view }).click()
      await page.waitForTimeout(300)
    }
    await expect.poll(() => page.locator('#today-requests').textContent()).toBe('1')
    expect(await page.locator('nav a[data-view="admin"]').isVisible()).toBe(false)
    const seen = `${bodies.join('\n')}${await page.content()}`
    expect(seen).not.toContain(A)
    expect(seen).not.toContain('private to A')
    expect(seen).not.toContain('slow A')
    await close()

    const admin = await newPage(browser)
    await signIn(admin.page, consoleUrl, ADMIN_KEY)
    await expect.poll(() => admin.page.locator('#admin-owners').textContent()).toContain(A)
    expect(await admin.page.locator('#admin-owners').textContent()).toContain(B)
    await expect.poll(() => admin.page.locator('#admin-models').textContent()).toContain('closed')
    await expect.poll(() => admin.page.locator('#admin-calls').textContent()).toContain(A)
    await screenshot(admin.page, 'admin')
    expect(await seriousViolations(admin.page)).toEqual([])
    stopHanging.abort()
    await hanging
    expect([...problems, ...admin.problems]).toEqual([])
    await admin.close()
  })

  it('measures the page: bytes transferred and time until it can be used (reported, not asserted as a time)', async () => {
    const { page, close } = await newPage(browser)
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    let transferred = 0
    cdp.on('Network.loadingFinished', (event: { encodedDataLength: number }) => {
      transferred += event.encodedDataLength
    })
    await page.goto(consoleUrl)
    await page.waitForSelector('html[data-ready="true"]')
    const timing = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming
      return { domContentLoadedMs: nav.domContentLoadedEventEnd, loadMs: nav.loadEventEnd }
    })
    const resources = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name.replace(/^.*\//, '')))
    saveMeasure('page', { transferredBytes: transferred, resources, ...timing })
    // Three files, nothing else fetched; the whole page under 24 KiB on the wire.
    expect(resources.sort()).toEqual(['app.css', 'app.js'])
    expect(transferred).toBeGreaterThan(0)
    expect(transferred).toBeLessThan(24 * 1024)
    await close()
  })
})

describe.skipIf(!CHROMIUM).each(['express', 'koa'] as const)('the console in Chromium (%s at /ai)', (mount) => {
  let browser: Browser
  let chain: ConsoleChain
  beforeAll(async () => {
    ;[browser, chain] = await Promise.all([launch(), startConsoleChain(mount)])
  })
  afterAll(async () => {
    await browser?.close()
    await chain?.close()
  })

  it('serves the page and its endpoints under the mount', async () => {
    const requestId = await cutCall(chain.url, KEY_A, `kept under ${mount}`)
    const { page, problems, close } = await newPage(browser)
    await signIn(page, `${chain.url}/console`, KEY_A)
    expect(new URL(page.url()).pathname).toBe('/ai/console/')
    await expect.poll(() => page.locator('#recoveries-list').textContent()).toContain(requestId)
    await page.getByRole('button', { name: `View record ${requestId}` }).click()
    await expect.poll(() => page.locator('#answer-text').textContent()).toBe(ANSWER)
    await page.getByRole('link', { name: 'Usage' }).click()
    await expect.poll(() => page.locator('#today-requests').textContent()).toBe('1')
    await screenshot(page, `${mount}-usage`)
    expect(problems).toEqual([])
    await close()
  })
})
