// The soak's own machinery: a seeded random source, a Redis server of its own (AOF on, its own port and directory,
// stopped by its pid), and a tap on the mock upstream that counts each call by the marker in its prompt.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { canConnect } from '../bench/lib/proc.mjs'
import { mulberry32 } from '../bench/lib/random.mjs'
import type { MockUpstream } from '../src/testing/index.js'

/** A seeded pseudo-random source (mulberry32): the same seed makes the same run of choices. */
export function seeded(seed: number) {
  const next = mulberry32(seed)
  return {
    next,
    /** An integer in [min, max]. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p: number) => next() < p,
  }
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const server = net.createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as net.AddressInfo).port
  server.close()
  await once(server, 'close')
  return port
}

/** A redis-server of the soak's own, with AOF (fsync on every write), in a temporary directory. */
export interface OwnRedis {
  url: string
  /** Kills the server by its pid (SIGKILL: nothing flushed beyond the AOF) and starts it again on the same files. */
  restart(downMs: number): Promise<void>
  stop(): Promise<void>
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'soak-redis-'))
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      { stdio: 'ignore' },
    )
    for (let n = 0; n < 100; n++) {
      if (await canConnect(port)) return
      await sleep(50)
    }
    throw new Error('redis-server did not start')
  }
  const kill = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart(downMs) {
      await kill()
      await sleep(downMs)
      await start()
    },
    async stop() {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** One upstream call as the tap saw it. */
export interface UpstreamCall {
  marker: string
  /** Its response was written whole. */
  finished: boolean
  /** The tokens its answer reported (0 until it finished). */
  tokens: number
  /** When its response was written whole (ms since the epoch). */
  finishedAt?: number
}

/** The soak's markers: one per logical call, in its prompt. */
export const MARKER = /soak-m\d+/

/** The tokens an answer reports, in any of the mock's formats: the last total it names (Anthropic: input + output). */
export function reportedTokens(text: string): number {
  const last = (pattern: RegExp) => {
    const all = [...text.matchAll(pattern)]
    return all.length === 0 ? undefined : Number(all.at(-1)?.[1])
  }
  const total = last(/"total_tokens":(\d+)/g) ?? last(/"totalTokenCount":(\d+)/g)
  if (total !== undefined) return total
  return (last(/"input_tokens":(\d+)/g) ?? 0) + (last(/"output_tokens":(\d+)/g) ?? 0)
}

/** Counts every call the mock upstream gets, by marker, with the tokens its answer reported once written whole. */
export function tapUpstream(mock: MockUpstream): UpstreamCall[] {
  const calls: UpstreamCall[] = []
  mock.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    let tail = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8')
    })
    const call: UpstreamCall = { marker: '', finished: false, tokens: 0 }
    req.on('end', () => {
      call.marker = MARKER.exec(body)?.[0] ?? ''
      if (call.marker) calls.push(call)
    })
    // The usage is at the end of every answer: the last few KiB written are kept.
    const keep = (chunk: unknown) => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) tail = (tail + chunk.toString()).slice(-8192)
    }
    const write = res.write.bind(res) as (...args: unknown[]) => boolean
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk)
      return write(chunk, ...rest)
    }) as typeof res.write
    res.end = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') keep(chunk)
      return end(chunk, ...rest)
    }) as typeof res.end
    res.on('finish', () => {
      call.finished = true
      call.finishedAt = Date.now()
      call.tokens = reportedTokens(tail)
    })
  })
  return calls
}
