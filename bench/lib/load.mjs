// Clients of the harness, all closed-loop and bounded in count or time: a sequential latency loop,
// a saturating load generator (autocannon when bench/ is installed, an undici pool otherwise) and an
// SSE reader that timestamps every frame as it arrives.
import { Client, Pool } from 'undici'
import { ms } from './stats.mjs'

let autocannon
try {
  autocannon = (await import('autocannon')).default
} catch {
  autocannon = undefined
}
// undici's dump() destroys the connection past its limit (128 KB unless a finite number is given).
export const ALL = 2 ** 40
export const loadGenerator = autocannon ? 'autocannon' : 'undici pool (autocannon not installed)'

/**
 * @typedef {object} Target
 * @property {string} origin e.g. http://127.0.0.1:1234
 * @property {string} path
 * @property {Record<string, string>} headers
 */

/**
 * Up to `count` requests one after another on one keep-alive connection, stopping early after
 * `maxMs` when given; per-request milliseconds.
 * @param {Target} target @param {string | Buffer} body @param {number} count @param {number} [maxMs]
 */
export async function latencySamples(target, body, count, maxMs = Number.POSITIVE_INFINITY) {
  const client = new Client(target.origin, { keepAliveTimeout: 30_000, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 })
  const samples = []
  let failures = 0
  const begin = process.hrtime.bigint()
  try {
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint()
      const res = await client.request({ path: target.path, method: 'POST', headers: target.headers, body })
      await res.body.dump({ limit: ALL })
      const end = process.hrtime.bigint()
      samples.push(ms(end - start))
      if (res.statusCode !== 200) failures++
      if (ms(end - begin) > maxMs) break
    }
  } finally {
    await client.close()
  }
  if (failures > 0) throw new Error(`${failures} of ${samples.length} requests to ${target.origin}${target.path} failed`)
  return samples
}

/**
 * Saturated throughput: `connections` clients, each sending its next request as soon as the last one
 * answered, for `durationS` seconds. Returns successful requests per second and latency percentiles.
 * `setup`, when given, rewrites each request (`{ headers }` in, `{ headers }` out) before it is sent.
 * @param {Target} target @param {string} body
 * @param {(req: { headers: Record<string, string> }) => { headers: Record<string, string> }} [setup]
 */
export async function saturate(target, body, connections, durationS, setup) {
  if (autocannon) {
    const result = await autocannon({
      url: `${target.origin}${target.path}`,
      method: 'POST',
      headers: target.headers,
      body,
      connections,
      pipelining: 1,
      duration: durationS,
      ...(setup ? { requests: [{ method: 'POST', setupRequest: setup }] } : {}),
    })
    const ok = result['2xx'] ?? 0
    return {
      rps: ok / durationS,
      p50: result.latency.p50,
      p99: result.latency.p99,
      failed: (result.non2xx ?? 0) + (result.errors ?? 0) + (result.timeouts ?? 0),
    }
  }
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
  const deadline = process.hrtime.bigint() + BigInt(Math.round(durationS * 1e9))
  const latencies = []
  let ok = 0
  let failed = 0
  const worker = async () => {
    while (process.hrtime.bigint() < deadline) {
      const start = process.hrtime.bigint()
      try {
        const headers = setup ? setup({ headers: target.headers }).headers : target.headers
        const res = await pool.request({ path: target.path, method: 'POST', headers, body })
        await res.body.dump({ limit: ALL })
        if (res.statusCode === 200) ok++
        else failed++
      } catch {
        failed++
      }
      latencies.push(ms(process.hrtime.bigint() - start))
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
  await pool.close()
  latencies.sort((a, b) => a - b)
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN
  return { rps: ok / durationS, p50: at(50), p99: at(99), failed }
}

/**
 * Reads one SSE stream and timestamps every frame (`\n\n`-terminated event) on arrival.
 * Frames that arrive in the same read as the one before are counted as coalesced. `lastFrame` is the last data frame's
 * text: a stream without `[DONE]` (Anthropic's, Google's) tells a clean end from an error event only by it.
 * @param {Client | Pool} client @param {Target} target @param {string} body
 */
export async function readStream(client, target, body) {
  const start = process.hrtime.bigint()
  const res = await client.request({ path: target.path, method: 'POST', headers: target.headers, body })
  if (res.statusCode !== 200) {
    await res.body.dump()
    throw new Error(`stream answered ${res.statusCode}`)
  }
  let first = -1
  let last = -1
  let frames = 0
  let coalesced = 0
  let done = false
  let pending = ''
  let lastFrame = ''
  /** @type {number[]} */
  const gaps = []
  for await (const chunk of res.body) {
    const now = ms(process.hrtime.bigint() - start)
    pending += chunk.toString('utf8')
    let inThisRead = 0
    for (let cut = pending.search(/\r?\n\r?\n/); cut !== -1; cut = pending.search(/\r?\n\r?\n/)) {
      const frame = pending.slice(0, cut)
      pending = pending.slice(cut + (pending[cut] === '\r' ? 4 : 2))
      // A resumable stream's events may open with their `id` line, typed events (Responses) with an `event:` line.
      if (!/(^|\n)data:/.test(frame)) continue
      frames++
      lastFrame = frame
      if (frame.includes('data: [DONE]')) done = true
      if (first < 0) first = now
      else gaps.push(now - last)
      if (inThisRead > 0) coalesced++
      inThisRead++
      last = now
    }
  }
  return { ttft: first, gaps, frames, coalesced, done, total: last, lastFrame }
}
