import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { createClient, createKeyv } from '@keyv/redis'
import type Keyv from 'keyv'
import { describe, it } from 'vitest'

/** The shared Redis the suites use; private servers for fault tests are started by `startOwnRedis`. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A plain node-redis client, for looking at what the gateway wrote. */
export type AdminClient = ReturnType<typeof createClient>

/** Whether a Redis answers PING at `url` within about a second. */
export async function redisReachable(url: string): Promise<boolean> {
  const client = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return true
  } catch {
    return false
  } finally {
    if (client.isOpen) client.destroy()
  }
}

/**
 * Declares a Redis suite: runs `body` when Redis is reachable; otherwise fails under CI and skips elsewhere,
 * saying how to enable it.
 */
export async function describeWithRedis(title: string, body: () => void): Promise<void> {
  if (await redisReachable(REDIS_URL)) {
    describe(title, body)
    return
  }
  if (process.env.CI) {
    describe(title, () => {
      it('needs a reachable Redis in CI', () => {
        throw new Error(`Redis is not reachable at ${REDIS_URL}: start redis-server or set REDIS_URL.`)
      })
    })
    return
  }
  console.warn(
    `[${title}] skipped: no Redis at ${REDIS_URL}. Start one (redis-server --port 6379 --save '' --appendonly no) or set REDIS_URL; with CI set this suite fails instead.`,
  )
  describe.skip(`${title} (no Redis at ${REDIS_URL}; start redis-server or set REDIS_URL)`, () => {
    it('needs Redis', () => {})
  })
}

/** Whether every one of these programs runs (`--version`) from PATH. */
export function onPath(...programs: string[]): boolean {
  return programs.every((program) => {
    try {
      execFileSync(program, ['--version'], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })
}

/**
 * Declares a suite that starts its own servers: runs `body` when `programs` are on PATH; otherwise fails under CI and
 * skips elsewhere, saying what to install.
 */
export function describeWithPrograms(title: string, programs: string[], install: string, body: () => void): void {
  if (onPath(...programs)) {
    describe(title, body)
    return
  }
  if (process.env.CI) {
    describe(title, () => {
      it(`needs ${programs.join(' and ')} in CI`, () => {
        throw new Error(`${programs.join(' or ')} is not on PATH: ${install}.`)
      })
    })
    return
  }
  console.warn(`[${title}] skipped: ${programs.join(' or ')} is not on PATH (${install}); with CI set this suite fails instead.`)
  describe.skip(`${title} (needs ${programs.join(' and ')})`, () => {
    it('needs its servers', () => {})
  })
}

/** Makes the SETs of every later MULTI fail when Redis runs them (an invalid expiry), while the rest of the transaction goes through. */
export function refuseSetsInTransactions(client: { multi(): object }): void {
  const multi = client.multi.bind(client)
  Object.assign(client, {
    multi: () => {
      const transaction = multi() as { set(key: string, value: string, options: { PX: number }): unknown }
      const set = transaction.set.bind(transaction)
      return Object.assign(transaction, { set: (key: string, value: string) => set(key, value, { PX: 0 }) })
    },
  })
}

/** Every key matching a SCAN pattern (the whole keyspace is walked, never KEYS). */
export async function keysMatching(admin: AdminClient, pattern: string): Promise<string[]> {
  const found: string[] = []
  let cursor = '0'
  do {
    const reply = await admin.scan(cursor, { MATCH: pattern, COUNT: 1000 })
    cursor = String(reply.cursor)
    found.push(...reply.keys)
  } while (cursor !== '0')
  return found
}

/** A test's own connection to the Redis at `url`, connected; its errors surface through the commands that fail. */
export async function connectAdmin(url = REDIS_URL): Promise<AdminClient> {
  const admin: AdminClient = createClient({ url })
  admin.on('error', () => {})
  await admin.connect()
  return admin
}

/** Deletes every key matching a SCAN pattern (a test run's namespace, when it ends). */
export async function dropKeys(admin: AdminClient, pattern: string): Promise<void> {
  const keys = await keysMatching(admin, pattern)
  if (keys.length > 0) await admin.unlink(keys)
}

const ownServers = new Set<ChildProcess>()

// A failing or interrupted run must not leave private servers behind.
process.once('exit', () => {
  for (const child of ownServers) child.kill('SIGKILL')
})

/** A Keyv on Redis with the settings the README recommends, so calls fail fast while Redis is down. */
export function recommendedKeyv(namespace: string, url = REDIS_URL): Keyv {
  return createKeyv(
    {
      url,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 2000,
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) + Math.floor(Math.random() * 100),
      },
    },
    { namespace, connectionTimeout: 2000 },
  )
}

/**
 * A private redis-server (or `options.program`, e.g. valkey-server) on `port` as a child process, never persisting
 * anything, with `options.args` appended; the shared one is never touched.
 */
export async function startOwnRedis(
  port: number,
  options: { program?: string; args?: string[]; cwd?: string } = {},
): Promise<ChildProcess> {
  const program = options.program ?? 'redis-server'
  const child = spawn(
    program,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...(options.args ?? [])],
    {
      stdio: 'ignore',
      cwd: options.cwd,
    },
  )
  ownServers.add(child)
  child.once('exit', () => ownServers.delete(child))
  let spawnError: Error | undefined
  child.once('error', (error) => {
    spawnError = error
    ownServers.delete(child)
  })
  for (let i = 0; i < 100; i++) {
    if (spawnError) throw new Error(`${program} could not be started (${spawnError.message}); the fault tests need it on PATH`)
    if (await redisReachable(`redis://127.0.0.1:${port}`)) return child
    if (child.exitCode !== null) break
    await sleep(100)
  }
  child.kill('SIGKILL')
  throw new Error(`${program} on port ${port} did not start`)
}

/** Kills a private redis-server at once (no shutdown save) and waits until it is gone. */
export async function killOwnRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

/** Kills every private redis-server still running. */
export async function killAllOwnRedis(): Promise<void> {
  await Promise.all([...ownServers].map(killOwnRedis))
}

/** How often a server ran each command since its last `CONFIG RESETSTAT`, from INFO commandstats (`config|resetstat`…). */
export async function commandCalls(admin: AdminClient): Promise<Map<string, number>> {
  const calls = new Map<string, number>()
  for (const match of (await admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls.set(match[1] as string, Number(match[2]))
  return calls
}

/** `commandCalls` without the INFO and CONFIG commands a test's admin client sends itself: what the gateway ran. */
export async function gatewayCommandCalls(admin: AdminClient): Promise<Map<string, number>> {
  return new Map([...(await commandCalls(admin))].filter(([name]) => !/^(info|config)\b/.test(name)))
}
