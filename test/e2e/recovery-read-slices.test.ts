import diagnosticsChannel from 'node:diagnostics_channel'
import type http from 'node:http'
import { createKeyv } from '@keyv/redis'
import type Keyv from 'keyv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { ownerOfKey } from '../../src/http/auth.js'
import { createGatewayStore } from '../../src/store/gateway-store.js'
import { RedisLink } from '../../src/store/redis-link.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { RecoveryRecord } from '../../src/types.js'
import { makeRecord } from '../contract/store-contract.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway } from '../support/collecting-gateway.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, open, readResponse } from '../support/http.js'
import { rawClient } from '../support/raw-client.js'
import { describeWithRedis, REDIS_URL } from '../support/redis.js'
import { serve } from '../support/servers.js'

// Reading a big kept record back, and a big background create, a slice at a time: `JSON.parse`, `JSON.stringify`
// and one `Buffer.from` of tens of megabytes each stalled every other request. Stalls are bounded by counting turns of
// the event loop (a `setImmediate` chain) over the work, never by time: work done at once leaves no turn.

const MB = 1000 * 1000
const MiB = 1024 * 1024

/** Counts turns of the event loop until `stop` says so; `counting` starts the count (before it, turns pass uncounted). */
function turnCounter(): { turns: () => number; from: () => void; stop: () => void } {
  let turns = 0
  let counting = false
  let running = true
  const tick = () => {
    if (counting) turns++
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  return {
    turns: () => turns,
    from: () => {
      counting = true
    },
    stop: () => {
      running = false
    },
  }
}

/** The turns of the event loop from a request sent until its answer's head arrived (the server's work before it). */
async function turnsToHead(url: string): Promise<{ turns: number; text: string; status: number }> {
  const counter = turnCounter()
  counter.from()
  try {
    const response = await open(url, { headers: bearer(KEY_A) })
    const turns = counter.turns()
    counter.stop()
    const { status, text } = await readResponse(response)
    return { turns, text, status }
  } finally {
    counter.stop()
  }
}

describe('the in-memory store: a kept 30 MB stream read back and replayed a slice at a time', () => {
  let mock: MockUpstream
  let url: string
  let close: () => Promise<void>
  /** The server's response to the last replay (`…/stream`), to watch what it queues. */
  let replay: http.ServerResponse | undefined
  let requestId: string

  beforeAll(async () => {
    mock = await startMockUpstream({ apiKey: UPSTREAM_KEY, record: false })
    const { gateway } = collectingGateway({
      upstreams: { gpt: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gpt-4o-mini', upstream: 'gpt' }],
      recovery: { streams: 'finish', maxMemoryBytes: 1024 * MiB, maxBytesPerOwner: 512 * MiB },
    })
    const handler = nodeHandler(gateway)
    const server = await serve((req, res) => {
      if (req.url?.endsWith('/stream')) replay = res
      handler(req, res)
    })
    url = server.url
    close = async () => {
      await server.close()
      await gateway.close()
      await mock.close()
    }
    // A stream whose client left at its head, kept whole (`streams: 'finish'`) once the upstream ends.
    const stored = new Promise<string>((resolve) => {
      const onStored = (message: unknown) => {
        diagnosticsChannel.unsubscribe('model-gateway:record:stored', onStored)
        resolve((message as { requestId: string }).requestId)
      }
      diagnosticsChannel.subscribe('model-gateway:record:stored', onStored)
    })
    const body = chatBody('read back', { stream: true, mock: { content_bytes: 30 * MB, chunks: 400 } })
    const client = rawClient(url, '/v1/chat/completions', body, KEY_A)
    requestId = await client.requestId()
    client.socket.resetAndDestroy()
    expect(await stored).toBe(requestId)
  }, 120_000)
  afterAll(() => close())

  it('GET /v1/recoveries/{id} writes the record over many turns, the same bytes as JSON.stringify', async () => {
    const { turns, text, status } = await turnsToHead(`${url}/v1/recoveries/${requestId}`)
    expect(status).toBe(200)
    const record = JSON.parse(text) as RecoveryRecord
    expect(record.request_id).toBe(requestId)
    expect((record.response.stream_raw as string).length).toBeGreaterThan(30 * MB)
    // What the answer was written as before: one `JSON.stringify` of the record (key order survives the parse).
    expect(text === JSON.stringify(record)).toBe(true)
    const textMiB = text.length / MiB
    console.log(`recovery-read-slices: memory record ${textMiB.toFixed(1)} MiB of text, ${turns} turns before its head`)
    // A turn after each MiB of text written; a fifth is left for slices that end short.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(0.8 * textMiB))
  }, 60_000)

  it('GET …/stream replays the kept events over many turns, never queueing more than a few MiB for the client', async () => {
    const expected = JSON.parse((await call(`${url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })).text) as RecoveryRecord
    const streamRaw = expected.response.stream_raw as string
    replay = undefined
    const counter = turnCounter()
    counter.from()
    let turnsToEnd: number | undefined
    let mostQueued = 0
    // Each turn: what the server's response holds for the client, and whether it has been ended yet.
    const sample = () => {
      if (replay) {
        mostQueued = Math.max(mostQueued, replay.writableLength)
        if (replay.writableEnded && turnsToEnd === undefined) turnsToEnd = counter.turns()
      }
      if (turnsToEnd === undefined) setImmediate(sample)
    }
    setImmediate(sample)
    try {
      const res = await call(`${url}/v1/recoveries/${requestId}/stream`, { headers: bearer(KEY_A) })
      expect(res.status).toBe(200)
      expect(res.text === streamRaw).toBe(true)
      await eventually(() => turnsToEnd !== undefined)
    } finally {
      counter.stop()
    }
    const streamMiB = Buffer.byteLength(streamRaw) / MiB
    console.log(
      `recovery-read-slices: replay of ${streamMiB.toFixed(1)} MiB, ${turnsToEnd} turns until ended, at most ${(mostQueued / MiB).toFixed(2)} MiB queued`,
    )
    expect(turnsToEnd).toBeGreaterThanOrEqual(Math.floor(0.8 * streamMiB))
    // One event (the mock sends 400, about 75 KB each) past the socket's own buffer, never the stream.
    expect(mostQueued).toBeLessThan(4 * MiB)
  }, 60_000)

  it('a 20 MB background create is decoded and parsed over many turns, and still runs to completion', async () => {
    const input = `${'background "input" é 😀 '.repeat(Math.ceil((20 * MB) / 26))}`
    const body = JSON.stringify({ model: 'gpt-4o-mini', input, background: true, stream: false, mock: { content_bytes: 64 } })
    const bodyMiB = Buffer.byteLength(body) / MiB
    const counter = turnCounter()
    let started = -1
    const onStart = () => {
      started = counter.turns()
    }
    diagnosticsChannel.subscribe('model-gateway:call:start', onStart)
    const handler = nodeHandler(
      collectingGateway({
        upstreams: { gpt: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
        models: [{ id: 'gpt-4o-mini', upstream: 'gpt' }],
      }).gateway,
    )
    // Counted from the moment the gateway has the whole body: its checks, then the background create's own reading.
    const server = await serve((req, res) => {
      req.on('end', () => counter.from())
      handler(req, res)
    })
    try {
      const created = await call(`${server.url}/v1/responses`, {
        method: 'POST',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body,
      })
      expect(created.status).toBe(200)
      expect(created.json.background).toBe(true)
      const done = await eventually(async () => {
        const now = await call(`${server.url}/v1/responses/${created.json.id}`, { headers: bearer(KEY_A) })
        return now.json.status === 'completed' ? now.json : undefined
      }, 60_000)
      expect(done.id).toBe(created.json.id)
    } finally {
      diagnosticsChannel.unsubscribe('model-gateway:call:start', onStart)
      counter.stop()
      await server.close()
    }
    console.log(`recovery-read-slices: background create of ${bodyMiB.toFixed(1)} MiB, ${started} turns from its last byte to its start`)
    // Checked on every call's path in about six turns a MiB (its UTF-8, then its grammar in 256 KiB slices); the
    // create's own reading adds its top-level members found in 256 KiB slices, inside this string full of escaped
    // quotes too (about four turns a MiB): at least two a MiB must show, where reading it at once showed none.
    expect(started).toBeGreaterThanOrEqual(Math.floor((6 + 2) * bodyMiB))
  }, 120_000)
})

await describeWithRedis('Redis: a 30 MB record read back a slice at a time', () => {
  const namespace = `recovery-read-slices-${process.pid}`
  const keyvs: Keyv[] = []
  let url: string
  let close: () => Promise<void>
  /** The turn count when the client last answered a value larger than a MiB (the record's big body). */
  let bigReplyAt: number | undefined
  let counter: ReturnType<typeof turnCounter> | undefined

  beforeAll(async () => {
    const keyv = createKeyv(REDIS_URL, { namespace })
    keyvs.push(keyv)
    const { gateway } = collectingGateway({
      upstreams: { gpt: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gpt-4o-mini', upstream: 'gpt' }],
      store: keyv,
      recovery: { maxBytesPerOwner: 512 * MiB },
    })
    const server = await serve(nodeHandler(gateway))
    url = server.url
    await keyv.get('warm-up')
    // Notes when Redis's answer of the big value reached the gateway: the reading and writing after it are counted.
    type Getter = { get(key: string): Promise<unknown>; withTypeMapping?(mapping: object): Getter }
    const noteBigReplies = (target: Getter): Getter => {
      const get = target.get.bind(target)
      target.get = async (key: string) => {
        const value: unknown = await get(key)
        if ((typeof value === 'string' || Buffer.isBuffer(value)) && value.length > MiB) bigReplyAt = counter?.turns()
        return value
      }
      return target
    }
    const client = noteBigReplies((keyv.store as { client: Getter }).client)
    // The gateway may ask through a copy of the client that answers with bytes: its copies are watched too.
    const withTypeMapping = client.withTypeMapping?.bind(client)
    if (withTypeMapping) client.withTypeMapping = (mapping: object) => noteBigReplies(withTypeMapping(mapping))
    close = async () => {
      await call(`${url}/v1/recoveries`, { method: 'DELETE', headers: bearer(KEY_A) })
      await server.close()
      await gateway.close()
    }
  })
  afterAll(async () => {
    await close()
    for (const keyv of keyvs) if (keyv.store) await keyv.disconnect().catch(() => {})
  })

  it('reads every value as Keyv reads it: long and marked strings, bytes, objects, absent and expired keys', async () => {
    const keyv = createKeyv(REDIS_URL, { namespace })
    keyvs.push(keyv)
    const link = new RedisLink(keyv, { waitMs: 2000, onError: () => {} })
    const values: unknown[] = [
      `${'x"\\é😀\u2028'.repeat(300_000)}`,
      `:${'y'.repeat(2 * MiB)}`,
      `:base64:${'z'.repeat(2 * MiB)}`,
      Buffer.from('bytes'),
      { v: 1, record: { request_id: 'r' } },
      'short',
    ]
    for (const [i, value] of values.entries()) {
      await keyv.set(`read-${i}`, value, 60_000)
      expect(await link.read(`read-${i}`)).toEqual(await keyv.get(`read-${i}`))
    }
    expect(await link.read('read-absent')).toBeUndefined()
    await keyv.set('read-expired', 'gone', 1)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await link.read('read-expired')).toBeUndefined()
  })

  it('GET /v1/recoveries/{id} parses the stored value and writes the answer over many turns, the same bytes', async () => {
    const seeding = createKeyv(REDIS_URL, { namespace })
    keyvs.push(seeding)
    const seeder = createGatewayStore({ keyv: seeding })
    const chunk = '{"text":"plain \\"quoted\\" back\\\\slash 证明 😀 :colon"}'
    const record = makeRecord({ responseBody: chunk.repeat(Math.ceil((30 * MB) / chunk.length)) })
    await seeder.put(ownerOfKey(KEY_A), record, 600_000)
    const expected = JSON.stringify(await seeder.get(ownerOfKey(KEY_A), record.request_id))
    bigReplyAt = undefined
    counter = turnCounter()
    counter.from()
    let turns: number
    let response: Awaited<ReturnType<typeof open>>
    try {
      response = await open(`${url}/v1/recoveries/${record.request_id}`, { headers: bearer(KEY_A) })
      turns = counter.turns()
    } finally {
      counter.stop()
    }
    const replied = bigReplyAt as number | undefined
    const { status, text } = await readResponse(response)
    expect(status).toBe(200)
    expect(text === expected).toBe(true)
    expect(replied).toBeDefined()
    // The stored text is Keyv's JSON of the body: its escapes make it longer than the body.
    const storedMiB = JSON.stringify(record.response.body_raw).length / MiB
    const textMiB = text.length / MiB
    const after = turns - (replied as number)
    console.log(`recovery-read-slices: redis record ${textMiB.toFixed(1)} MiB of text, ${after} turns from Redis's answer to the head`)
    // A turn per MiB of the stored text scanned, and per MiB written out; a fifth is left for slices that end short.
    expect(after).toBeGreaterThanOrEqual(Math.floor(0.8 * (storedMiB + textMiB)))
  }, 120_000)
})
