// The Redis baseline: the commands the gateway's Redis store sends for one record, issued directly
// with @redis/client in the same single round trip (one MULTI) and with the same payloads (values wrapped the way
// Keyv stores them), with no Keyv, no hashing and no HTTP. Key names carry the run's namespace so the clean-up
// removes exactly what this run wrote.
import { createClient } from '@redis/client'

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const client = createClient({ url, socket: { connectTimeout: 2000, reconnectStrategy: false } })
client.on('error', () => {})

let version = ''
try {
  await client.connect()
  const info = await client.info('server')
  version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?'
} catch (error) {
  process.send?.({ type: 'skip', reason: `Redis not reachable at ${url}: ${error?.message ?? error}` })
  process.exit(0)
}

const TTL = 3 * 24 * 3600_000
/** The pause before each timed sequential write: about one interrupted request's round through the gateway. */
const PACE_MS = 18
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Payloads shaped like the gateway's: a small JSON envelope, the request body, the response body. */
function payload(i, responseBytes) {
  const requestId = `01BENCH${String(i).padStart(19, '0')}`
  const request = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Write a long essay.' }] })
  const response = JSON.stringify({
    id: `chatcmpl-${i}`,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(responseBytes) } }],
  })
  const envelope = {
    v: 1,
    record: {
      request_id: requestId,
      created_at: 1700000000,
      interrupted_reason: 'context canceled',
      request_body_hash: '0123456789abcdef',
      request: { request_body_hash: '0123456789abcdef', path: '/v1/chat/completions', endpoint: 'chat.completions', model: 'gpt-4o-mini' },
      response: { response_body_size: response.length, status: 200, content_type: 'application/json' },
    },
    request_chars: request.length,
    response_chars: response.length,
  }
  const entry = JSON.stringify({
    request_id: requestId,
    created_at: 1700000000,
    interrupted_reason: 'context canceled',
    request_body_hash: '0123456789abcdef',
    expires_at: Date.now() + TTL,
  })
  return { requestId, request, response, envelope, entry }
}

/** One record in one round trip, as the gateway sends it: three SETs, the catalog entry, its expiry, its length. */
async function writeRecord(ns, i, responseBytes) {
  const p = payload(i, responseBytes)
  const detail = `${ns}::rec:{owner}:${p.requestId}`
  const index = `${ns}::idx:{owner}`
  const expires = Date.now() + TTL
  const replies = await client
    .multi()
    .set(detail, JSON.stringify({ value: p.envelope, expires }), { PX: TTL })
    .set(`${detail}:req`, JSON.stringify({ value: p.request, expires }), { PX: TTL })
    .set(`${detail}:res`, JSON.stringify({ value: p.response, expires }), { PX: TTL })
    .hSet(index, p.requestId, p.entry)
    .pExpire(index, TTL, 'NX')
    .pExpire(index, TTL, 'GT')
    .hLen(index)
    .exec()
  if (replies.slice(0, 3).some((reply) => reply !== 'OK')) throw new Error('a SET was not taken')
}

/** The gateway's listing: the catalog one HSCAN page at a time, each page's detail keys counted with one EXISTS. */
async function list(ns) {
  const index = `${ns}::idx:{owner}`
  const entries = []
  let cursor = '0'
  do {
    const page = await client.hScan(index, cursor, { COUNT: 1000 })
    cursor = String(page.cursor)
    const parsed = page.entries.map((e) => JSON.parse(String(e.value)))
    if (parsed.length === 0) continue
    const present = await client.exists(parsed.map((e) => `${ns}::rec:{owner}:${e.request_id}`))
    if (present !== parsed.length) throw new Error('a listed record is gone')
    entries.push(...parsed)
  } while (cursor !== '0')
  return entries.sort((a, b) => (a.request_id < b.request_id ? 1 : -1)).length
}

async function cleanup(pattern) {
  let removed = 0
  let cursor = '0'
  do {
    const reply = await client.scan(cursor, { MATCH: pattern, COUNT: 1000 })
    cursor = String(reply.cursor)
    if (reply.keys.length > 0) removed += await client.unlink(reply.keys)
  } while (cursor !== '0')
  return removed
}

process.on('message', async (message) => {
  const reply = (extra = {}) => process.send?.({ id: message.id, ...extra })
  try {
    if (message.type === 'run') {
      const { ns, sequential, burst, responseBytes, listRepeats } = message
      for (let i = 0; i < 20; i++) await writeRecord(`${ns}-warm`, i, responseBytes)
      const samples = []
      for (let i = 0; i < sequential; i++) {
        // Paced as the gateway's writes are (one interrupted request with a 15 ms upstream at a time): back to back,
        // a warm process and a busy CPU answer several times faster than after an idle gap, which is not a fair floor.
        await sleep(PACE_MS)
        const start = process.hrtime.bigint()
        await writeRecord(ns, i, responseBytes)
        samples.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
      const burstStart = process.hrtime.bigint()
      await Promise.all(Array.from({ length: burst }, (_, i) => writeRecord(ns, sequential + i, responseBytes)))
      const burstMs = Number(process.hrtime.bigint() - burstStart) / 1e6
      const lists = []
      let listed = 0
      for (let i = 0; i < listRepeats; i++) {
        const start = process.hrtime.bigint()
        listed = await list(ns)
        lists.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
      await cleanup(`${ns}*`)
      return reply({ samples, burstMs, lists, listed })
    }
    if (message.type === 'cleanup') return reply({ removed: await cleanup(message.pattern) })
    return reply({ error: `unknown message ${message.type}` })
  } catch (error) {
    return reply({ error: String(error?.stack ?? error) })
  }
})

process.send?.({ type: 'ready', version })
process.once('disconnect', () => {
  client.destroy()
  process.exit(0)
})
