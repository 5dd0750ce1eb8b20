// What the coding-agent tests share: the agents' binaries (installed once from the npm registry into a cache folder,
// never into the project), a gateway on a real port in front of the mock upstream, and a way to run an agent with
// its telemetry and auto-update off.
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Duplex } from 'node:stream'
import { promisify } from 'node:util'
import { nodeHandler, upgradeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/index.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { Gateway, GatewayOptions } from '../../src/types.js'

/** The versions the tests were written against: the fixtures' agents, or the newest that speaks the same protocol. */
export const AGENT_PACKAGES = {
  claude: '@anthropic-ai/claude-code@2.1.332',
  codex: '@openai/codex@0.171.0',
  gemini: '@google/gemini-cli@0.61.0',
} as const

/** An agent the tests run. */
export type AgentName = keyof typeof AGENT_PACKAGES

const AGENTS_DIR = process.env.MODEL_GATEWAY_AGENTS_DIR ?? path.join(os.tmpdir(), 'model-gateway-agents')

/** Where each agent's command is once installed. */
export const AGENT_BINARIES = {
  claude: path.join(AGENTS_DIR, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'),
  codex: path.join(AGENTS_DIR, 'node_modules', '@openai', 'codex', 'bin', 'codex.js'),
  gemini: path.join(AGENTS_DIR, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js'),
} satisfies Record<AgentName, string>

/** What each agent is called in a reason it cannot run. */
const AGENT_TITLES: Record<AgentName, string> = { claude: 'Claude Code', codex: 'Codex CLI', gemini: 'Gemini CLI' }

/**
 * Installs the agents a test file runs (Claude Code and Codex ship a native binary each, about 800 MB together) unless
 * they are there already; resolves to why they cannot be installed, or undefined when they are ready. Nothing else
 * decides to skip an agent test, and under CI (`CI` set) nothing does: there an agent that cannot be installed fails
 * the run, as a missing Redis does.
 */
export async function installAgents(...agents: AgentName[]): Promise<string | undefined> {
  const reason = await installed(agents)
  if (reason !== undefined && process.env.CI) throw new Error(`The coding agents are needed under CI, but ${reason}`)
  return reason
}

async function installed(agents: readonly AgentName[]): Promise<string | undefined> {
  const missing = agents.filter((agent) => !existsSync(AGENT_BINARIES[agent]))
  if (missing.length === 0) return undefined
  mkdirSync(AGENTS_DIR, { recursive: true })
  try {
    await promisify(execFile)(
      'npm',
      [
        'install',
        '--prefix',
        AGENTS_DIR,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        // Every agent, so one install does not take another's packages out of the folder.
        ...Object.values(AGENT_PACKAGES),
      ],
      { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
    )
  } catch (error) {
    return `the agents could not be installed from the npm registry: ${String(error).slice(0, 300)}`
  }
  const absent = missing.find((agent) => !existsSync(AGENT_BINARIES[agent]))
  return absent === undefined ? undefined : `the ${AGENT_TITLES[absent]} package has no launcher at ${AGENT_BINARIES[absent]}`
}

/** The key the agents present to the gateway, and the gateway's own key for the mock. */
export const CLIENT_KEY = 'sk-agent-client'
export const UPSTREAM_KEY = 'sk-agent-upstream'

/** A gateway on a real port in front of the mock upstream, which speaks all three dialects. */
export interface AgentGateway {
  url: string
  mock: MockUpstream
  gateway: Gateway
  /** Every call answered with a 4xx, as `<method> <path> <status> <body's start>`: what an agent had refused. */
  refusals: string[]
  /** Every HTTP request, as `<method> <path>`, and every WebSocket upgrade, as `UPGRADE <path>`. */
  seen: string[]
  close(): Promise<void>
}

/**
 * Starts the mock and a gateway with one Anthropic, one OpenAI and one Gemini upstream on it. `models` maps the ids
 * the agents ask for to an upstream and its model name.
 */
export async function startAgentGateway(models: GatewayOptions['models']): Promise<AgentGateway> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const gateway = createGateway({
    upstreams: {
      anthropic: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      openai: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
      gemini: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      // The same mock, taking translated calls through its Responses API, as models only that API serves need.
      responses: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY, api: 'responses' },
    },
    models,
    auth: { apiKeys: [CLIENT_KEY] },
  })
  const handle = nodeHandler(gateway)
  const refusals: string[] = []
  const seen: string[] = []
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    let head = ''
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean
    const keep = (chunk: unknown) => {
      if (head.length < 500 && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) head += chunk.toString().slice(0, 500)
    }
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk)
      return write(chunk, ...rest)
    }) as typeof res.write
    const end = res.end.bind(res) as (chunk?: unknown, ...rest: unknown[]) => typeof res
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') keep(chunk)
      return end(chunk, ...rest)
    }) as typeof res.end
    res.on('finish', () => {
      if (res.statusCode >= 400 && res.statusCode < 500) refusals.push(`${req.method} ${req.url} ${res.statusCode} ${head}`)
    })
    handle(req, res)
  })
  // Responses over WebSocket (Codex with `supports_websockets = true`), as the docs wire it; an upgrade the gateway
  // refuses is answered with an HTTP status on the socket itself, kept as a refusal too.
  const upgrade = upgradeHandler(gateway)
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    seen.push(`UPGRADE ${req.url}`)
    const end = socket.end.bind(socket) as (chunk?: unknown, ...rest: unknown[]) => Duplex
    socket.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string' && /^HTTP\/1\.1 4/.test(chunk)) refusals.push(`UPGRADE ${req.url} ${chunk.slice(9, 500)}`)
      return end(chunk, ...rest)
    }) as typeof socket.end
    upgrade(req, socket, head)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    mock,
    gateway,
    refusals,
    seen,
    async close() {
      // The gateway first: it closes the sockets it holds, which the server would otherwise wait for.
      await gateway.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await mock.close()
    },
  }
}

/** What an agent run printed and how it ended. */
export interface AgentRun {
  code: number | null
  stdout: string
  stderr: string
}

/** A fresh home for one run: agents keep settings, sessions and logs there, never in the user's home. */
export function scratchHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'model-gateway-agent-home-'))
}

/** Runs an agent to its end, killed after `timeoutMs`; its environment holds only what the run gives it and PATH. */
export function runAgent(command: string, args: readonly string[], env: Record<string, string>, timeoutMs = 120_000): Promise<AgentRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: env.HOME,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
