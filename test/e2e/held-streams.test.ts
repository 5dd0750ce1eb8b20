import { expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway, type LoggedLine } from '../support/collecting-gateway.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, open, readResponse } from '../support/http.js'
import { peakGrowth } from '../support/peak-memory.js'
import { rawClient } from '../support/raw-client.js'
import { serve } from '../support/servers.js'

const MB = 1000 * 1000
const MiB = 1024 * 1024
const CHAT = '/v1/chat/completions'
const UNKEEPABLE = 'model-gateway: a stream whose client left is too large to keep; it is stopped and not kept'

/** A gateway in front of a mock upstream that records nothing (it would hold every stream it sent). */
async function start(overrides: Partial<GatewayOptions>) {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY, record: false })
  const { gateway, logs } = collectingGateway({
    upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
    models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
    ...overrides,
  })
  const server = await serve(nodeHandler(gateway))
  return {
    url: server.url,
    mock,
    logs,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/** Starts a stream of `bytes` of content and leaves once its head arrived; resolves with its request id. */
async function abandon(url: string, text: string, bytes: number): Promise<string> {
  const body = chatBody(text, { stream: true, mock: { content_bytes: bytes, chunks: 400, chunk_delay_ms: 1 } })
  const client = rawClient(url, CHAT, body, KEY_A)
  const requestId = await client.requestId()
  client.socket.resetAndDestroy()
  return requestId
}

const warnedFor = (logs: LoggedLine[], requestId: string) =>
  logs.some((line) => line.message === UNKEEPABLE && line.meta?.requestId === requestId)

const hasRecord = async (url: string, requestId: string) =>
  (await call(`${url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })).status === 200

/** Abandons four streams of 20 MB at once and waits until each is kept, or stopped with its log line. */
async function abandonFour(gw: Awaited<ReturnType<typeof start>>): Promise<string[]> {
  const ids = await Promise.all([1, 2, 3, 4].map((n) => abandon(gw.url, `abandoned ${n}`, 20 * MB)))
  return Promise.all(
    ids.map((id) =>
      eventually(async () => {
        if (warnedFor(gw.logs, id)) return 'stopped'
        return (await hasRecord(gw.url, id)) ? 'kept' : undefined
      }, 60_000),
    ),
  )
}

it('keeps at most what recovery.maxHeldStreamBytes holds of abandoned streams, stopping the others with a log line', async () => {
  const gw = await start({ recovery: { streams: 'finish', maxHeldStreamBytes: 24 * MiB } })
  try {
    const outcomes = await abandonFour(gw)
    // 24 MiB holds one 20 MB stream at a time: the others were stopped, never crashed, never half kept.
    expect(outcomes.filter((o) => o === 'kept').length).toBeLessThanOrEqual(1)
    expect(outcomes.filter((o) => o === 'stopped').length).toBeGreaterThanOrEqual(3)
    expect(gw.mock.abortedStreams).toBeGreaterThanOrEqual(3)
  } finally {
    await gw.close()
  }
}, 120_000)

it('holds abandoned streams within recovery.maxHeldStreamBytes all together', async () => {
  const gw = await start({ recovery: { streams: 'finish', maxHeldStreamBytes: 12 * MiB } })
  try {
    const { result: outcomes, growth } = await peakGrowth(() => abandonFour(gw))
    console.log('held-streams: outcomes', outcomes.join(','), 'peak array-buffer growth MiB', (growth / MiB).toFixed(1))
    expect(outcomes).toEqual(['stopped', 'stopped', 'stopped', 'stopped'])
    // Four 20 MB streams held to their end would be 80 MB and more (and as much again journaled in the in-memory
    // store); here 12 MiB are held at most, as much again journaled, plus what is in flight.
    expect(growth).toBeLessThan(64 * MiB)
  } finally {
    await gw.close()
  }
}, 120_000)

it("stops an abandoned stream as soon as it outgrows what its owner's quota can keep, before paying for the rest", async () => {
  const gw = await start({ recovery: { streams: 'finish', maxBytesPerOwner: 16 * MiB } })
  try {
    const id = await abandon(gw.url, 'over the quota', 20 * MB)
    await eventually(() => warnedFor(gw.logs, id), 30_000)
    await eventually(() => gw.mock.abortedStreams === 1, 30_000)
    expect(await hasRecord(gw.url, id)).toBe(false)
    expect(gw.logs.some((line) => line.message.includes('could not be stored'))).toBe(false)
  } finally {
    await gw.close()
  }
})

it('cuts joined retries that do not read instead of buffering the stream for each', async () => {
  const gw = await start({})
  try {
    const headers = { ...bearer(KEY_A), 'idempotency-key': 'slow-joiners-1' }
    const body = chatBody('joined', { stream: true, mock: { content_bytes: 30 * MB, chunks: 600, chunk_delay_ms: 2 } })
    const original = await open(`${gw.url}${CHAT}`, { headers, body })
    const joiners = Array.from({ length: 10 }, () => rawClient(gw.url, CHAT, body, KEY_A, { 'idempotency-key': 'slow-joiners-1' }))
    await Promise.all(joiners.map((j) => j.readAtLeast(1)))
    for (const joiner of joiners) joiner.socket.pause()
    const whole = await readResponse(original)
    expect(whole.text.endsWith('data: [DONE]\n\n')).toBe(true)
    for (const joiner of joiners) {
      joiner.socket.resume()
      await joiner.closed
      // Cut well before the end: it holds at most what the sockets' buffers took and its bounded backlog.
      expect(joiner.read()).toBeLessThan(whole.text.length)
    }
  } finally {
    await gw.close()
  }
})
