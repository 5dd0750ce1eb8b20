import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createClient } from '@keyv/redis'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { eventually } from './http.js'
import { type AdminClient, keysMatching, REDIS_URL } from './redis.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SCRIPT = join(ROOT, 'test/support/redis-gateway.mjs')

/** One line a gateway process reported (see test/support/redis-gateway.mjs). */
export interface ProcessEvent {
  listening?: number
  log?: 'info' | 'warn' | 'error'
  message?: string
  meta?: Record<string, unknown>
  /** When a log line was written (ms since the epoch). */
  at?: number
  usage?: { requestId: string; recovered: boolean; owner: string; totalTokens: number; complete: boolean }
  /** An unhandled rejection (the process then crashes). */
  unhandled?: string
  closed?: boolean
  /**
   * An answer to a call marked `x-soak-marker` that was handed on (its response finished, at `at`: ms since the epoch
   * to the microsecond) and whose client then closed the connection cleanly without sending another byte.
   */
  handedOn?: { marker: string; at: number }
}

/** What a gateway process answers to `{ type: 'memory' }`: its memory, and its longest loop delay since the last ask. */
export interface ProcessMemory extends NodeJS.MemoryUsage {
  loopMaxMs: number
}

/** A gateway running in its own Node process. */
export interface GatewayProcess {
  url: string
  child: ChildProcess
  /** Everything it reported so far, in order. */
  events: ProcessEvent[]
  /** Its stderr so far (empty unless something went badly wrong). */
  stderr(): string
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves to the exit code (null when killed). */
  stop(graceMs?: number): Promise<number | null>
  /** Its memory, and the longest event-loop delay since the last call. */
  memory(): Promise<ProcessMemory>
  /** The ledger's usage of an owner (`gateway.usage`). */
  usage(owner: string): Promise<{ requests: number; tokens: number; cost: number }>
}

/** Settings of one gateway process. */
export interface GatewayProcessEnv {
  /** Empty: the default in-memory store. */
  redisUrl: string
  /** A Redis Cluster's seed node URLs: the process then uses a cluster client instead of `redisUrl`. */
  clusterNodes?: string[]
  namespace: string
  upstreamUrl: string
  apiKeys: string[]
  ttlMs?: number
  /** The gateway's `idempotency` options. */
  idempotency?: Record<string, unknown>
  /** Further `recovery` options (beside `ttlMs`), e.g. `{ streams: 'finish' }`. */
  recovery?: Record<string, unknown>
  /** The gateway's `limits.owners`, e.g. `{ requestsPerMinute: 3 }`. */
  limits?: Record<string, unknown>
  /** The gateway's `background` options, e.g. `{ leaseMs: 1000 }`. */
  background?: Record<string, unknown>
  /** The gateway's `pricing`, e.g. `{ 'gpt-4o-mini': { input: 1, output: 1 } }`. */
  pricing?: Record<string, unknown>
}

const running = new Set<ChildProcess>()

// Children also leave on their own when this process goes (their IPC channel closes); this covers a plain exit.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

function newestMtime(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = 0
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)))
  return newest
}

/** Builds the package once when `dist` is missing or older than its sources: the children import it by name. */
export async function ensureBuilt(): Promise<void> {
  const sources = ['src', 'adapters', 'package.json', 'tsup.config.ts'].map((p) => newestMtime(join(ROOT, p)))
  let built = 0
  try {
    built = Math.min(...['dist/index.js', 'dist/node.js'].map((p) => statSync(join(ROOT, p)).mtimeMs))
  } catch {
    built = 0
  }
  if (built > Math.max(...sources)) return
  await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT, timeout: 180_000 })
}

/** Starts a gateway process and waits until it listens. */
export async function startGatewayProcess(settings: GatewayProcessEnv): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [SCRIPT], {
    cwd: ROOT,
    env: {
      ...process.env,
      REDIS_URL: settings.redisUrl,
      REDIS_CLUSTER_NODES: settings.clusterNodes ? JSON.stringify(settings.clusterNodes) : '',
      NAMESPACE: settings.namespace,
      UPSTREAM_URL: settings.upstreamUrl,
      API_KEYS: JSON.stringify(settings.apiKeys),
      TTL_MS: settings.ttlMs === undefined ? '' : String(settings.ttlMs),
      IDEMPOTENCY: settings.idempotency === undefined ? '' : JSON.stringify(settings.idempotency),
      RECOVERY: settings.recovery === undefined ? '' : JSON.stringify(settings.recovery),
      LIMITS: settings.limits === undefined ? '' : JSON.stringify(settings.limits),
      BACKGROUND: settings.background === undefined ? '' : JSON.stringify(settings.background),
      PRICING: settings.pricing === undefined ? '' : JSON.stringify(settings.pricing),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  const events: ProcessEvent[] = []
  let stderr = ''
  let pending = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as ProcessEvent)
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const stop = async (graceMs = 10_000): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    await exited
    clearTimeout(timer)
    return child.exitCode
  }
  try {
    const port = await eventually(() => {
      if (child.exitCode !== null) throw new Error(`gateway process exited (${child.exitCode}): ${stderr}`)
      return events.find((e) => e.listening)?.listening
    }, 20_000)
    const ask = askOver(child)
    return {
      url: `http://127.0.0.1:${port}`,
      child,
      events,
      stderr: () => stderr,
      stop,
      memory: async () => (await ask({ type: 'memory' })) as unknown as ProcessMemory,
      usage: async (owner) =>
        ((await ask({ type: 'usage', owner })) as { usage: { requests: number; tokens: number; cost: number } }).usage,
    }
  } catch (error) {
    await stop(1000)
    throw error
  }
}

/** One question over a child's IPC channel and its answer (matched by id); rejects when the child exits first. */
function askOver(child: ChildProcess): (message: Record<string, unknown>) => Promise<Record<string, unknown>> {
  let sequence = 0
  return (message) =>
    new Promise((resolve, reject) => {
      const id = ++sequence
      const onMessage = (reply: { id?: number; error?: string }) => {
        if (reply?.id !== id) return
        done()
        if (reply.error) reject(new Error(reply.error))
        else resolve(reply as Record<string, unknown>)
      }
      const onExit = () => {
        done()
        reject(new Error('gateway process exited'))
      }
      const done = () => {
        child.off('message', onMessage)
        child.off('exit', onExit)
      }
      child.on('message', onMessage)
      child.once('exit', onExit)
      if (child.connected) child.send({ ...message, id })
      else onExit()
    })
}

/** Stops every gateway process still running (SIGKILL after a grace period). */
export async function stopAllGatewayProcesses(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await Promise.race([exited, sleep(5000)])
      child.kill('SIGKILL')
    }),
  )
}

/** What the tests of a block of gateway processes on one Redis share, filled in before they run. */
export interface ProcessesOnRedis {
  mock: MockUpstream
  admin: AdminClient
}

/**
 * Sets up a block of tests of gateway processes on the shared Redis: the package built, an admin client and a
 * mock upstream before them, every process stopped after each test, and every key under `run` removed after them.
 */
export function useProcessesOnRedis(run: string): ProcessesOnRedis {
  const shared = {} as ProcessesOnRedis
  beforeAll(async () => {
    await ensureBuilt()
    const admin: AdminClient = createClient({ url: REDIS_URL })
    admin.on('error', () => {})
    await admin.connect()
    shared.admin = admin
    shared.mock = await startMockUpstream()
  }, 240_000)
  afterEach(() => stopAllGatewayProcesses())
  afterAll(async () => {
    await stopAllGatewayProcesses()
    if (shared.admin?.isOpen) {
      const keys = await keysMatching(shared.admin, `${run}*`)
      if (keys.length > 0) await shared.admin.unlink(keys)
      shared.admin.destroy()
    }
    await shared.mock?.close()
  })
  return shared
}
