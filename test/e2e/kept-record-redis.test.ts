import diagnosticsChannel from 'node:diagnostics_channel'
import { createKeyv } from '@keyv/redis'
import type Keyv from 'keyv'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { assembledAnswer } from '../../src/dialects/index.js'
import { eventData } from '../../src/sse/parse.js'
import { RedisLink } from '../../src/store/redis-link.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { RecoveryRecord } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway } from '../support/collecting-gateway.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call } from '../support/http.js'
import { turnsDuring } from '../support/loop-turns.js'
import { rawClient } from '../support/raw-client.js'
import { describeWithRedis, REDIS_URL } from '../support/redis.js'
import { serve } from '../support/servers.js'

const MB = 1000 * 1000
const MiB = 1024 * 1024

await describeWithRedis('a kept stream written to Redis a slice at a time', () => {
  const namespace = `kept-record-redis-${process.pid}`
  const keyvs: Keyv[] = []
  const keyvOn = (options: { compression?: unknown; serialize?: (data: unknown) => string } = {}) => {
    const keyv = createKeyv(REDIS_URL, { namespace })
    if (options.serialize) keyv.serialize = options.serialize
    if (options.compression) keyv.compression = options.compression as Keyv['compression']
    keyvs.push(keyv)
    return keyv
  }
  afterAll(async () => {
    for (const keyv of keyvs) await keyv.disconnect()
  })

  it('writes a long string as the bytes of what Keyv would write, with turns of the event loop', async () => {
    const keyv = keyvOn()
    const link = new RedisLink(keyv, { waitMs: 2000, onError: () => {} })
    const values = [`${'x'.repeat(2 * MiB)}"\\é😀\u2028`, `:${'y'.repeat(2 * MiB)}`, `:base64:${'z'.repeat(2 * MiB)}`, 'short']
    for (const value of values) {
      const written = await link.serialize(value, 1_700_000_000_000)
      expect(written.toString() === (await keyv.serializeData({ value, expires: 1_700_000_000_000 }))).toBe(true)
    }
    const { result, turns } = await turnsDuring(() => link.serialize(`é${'x'.repeat(20 * MiB)}`, 5))
    expect(Buffer.isBuffer(result)).toBe(true)
    expect(turns).toBeGreaterThanOrEqual(15)
  })

  it('leaves the writing to Keyv when it serialises another way or compresses', async () => {
    const value = `:${'w'.repeat(2 * MiB)}`
    const custom = keyvOn({ serialize: (data) => JSON.stringify(data) })
    const compressing = keyvOn({ compression: { compress: async (v: unknown) => `c${String(v)}`, decompress: async (v: unknown) => v } })
    for (const keyv of [custom, compressing]) {
      const written = await new RedisLink(keyv, { waitMs: 2000, onError: () => {} }).serialize(value, 7)
      expect(typeof written).toBe('string')
      expect(written).toBe(await keyv.serializeData({ value, expires: 7 }))
    }
  })

  let mock: MockUpstream
  let url: string
  let close: () => Promise<void>
  beforeAll(async () => {
    mock = await startMockUpstream({ apiKey: UPSTREAM_KEY, record: false })
    const { gateway } = collectingGateway({
      upstreams: { gpt: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gpt-4o-mini', upstream: 'gpt' }],
      store: createKeyv(REDIS_URL, { namespace: `${namespace}-gateway` }),
      recovery: { streams: 'finish', maxBytesPerOwner: 512 * MiB },
    })
    const server = await serve(nodeHandler(gateway))
    url = server.url
    close = async () => {
      await call(`${url}/v1/recoveries`, { method: 'DELETE', headers: bearer(KEY_A) })
      await server.close()
      await gateway.close()
      await mock.close()
    }
  })
  afterAll(() => close())

  it('keeps an abandoned 30 MB stream, the same record as when it was written at once', async () => {
    let stored: string | undefined
    const onStored = (message: unknown) => {
      stored = (message as { requestId: string }).requestId
    }
    diagnosticsChannel.subscribe('model-gateway:record:stored', onStored)
    let requestId: string
    try {
      const body = chatBody('kept on redis', { stream: true, mock: { content_bytes: 30 * MB, chunks: 400 } })
      const client = rawClient(url, '/v1/chat/completions', body, KEY_A)
      requestId = await client.requestId()
      client.socket.resetAndDestroy()
      await new Promise<void>((resolve) => {
        const tick = () => {
          if (stored === requestId) resolve()
          else setImmediate(tick)
        }
        setImmediate(tick)
      })
    } finally {
      diagnosticsChannel.unsubscribe('model-gateway:record:stored', onStored)
    }
    const res = await call(`${url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(200)
    const record = JSON.parse(res.text) as RecoveryRecord
    const streamRaw = record.response.stream_raw as string
    const plan = {
      model: 'gpt-4o-mini',
      upstreamModel: 'gpt-4o-mini',
      stream: true,
      includeUsage: true,
      requestId,
      created: record.created_at,
      request: {},
    }
    const expected = JSON.stringify(assembledAnswer('chat.completions', eventData(streamRaw), plan))
    expect(record.response.body_raw === expected).toBe(true)
    expect(record.response.response_body_size).toBe(Buffer.byteLength(expected))
    // Turns are not counted here: writing 60 MB to Redis takes thousands of turns of socket I/O whatever the
    // serialising does; the test above counts them while the record's value is written.
  }, 120_000)
})
