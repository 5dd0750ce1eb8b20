import diagnosticsChannel from 'node:diagnostics_channel'
import { type DataPoint, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { gatewayChannels, ownerId } from '../../src/index.js'
import { instrumentGateway } from '../../src/otel/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A } from '../support/fixture.js'
import { call } from '../support/http.js'
import { DIALECTS, freshMinute, type LedgerChain, startLedgerChain } from '../support/ledger.js'
import { recommendedKeyv } from '../support/redis.js'

// A call the ledger refuses never went upstream: like every refusal before the upstream it has no call:start or
// call:end, and is published on call:refused instead, which OpenTelemetry counts as model_gateway.call.refused.
const [CHAT, , , CLAUDE] = DIALECTS as [(typeof DIALECTS)[0], (typeof DIALECTS)[0], (typeof DIALECTS)[0], (typeof DIALECTS)[0]]
const OWNER_A = ownerId({ apiKey: KEY_A })

/** A reader the test collects from on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** What one gateway published on the call channels, and the OpenTelemetry counter of refusals. */
interface Watched {
  chain: LedgerChain
  published: Record<'start' | 'end' | 'refused', Array<{ requestId: string } & Record<string, unknown>>>
  refusedPoints(): Promise<Array<DataPoint<number>>>
}

let stops: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const stop of stops.reverse()) await stop()
  stops = []
})

async function watched(options: Partial<GatewayOptions>): Promise<Watched> {
  await freshMinute()
  const chain = await startLedgerChain(options)
  const published: Watched['published'] = { start: [], end: [], refused: [] }
  const listeners = (['start', 'end', 'refused'] as const).map((kind) => {
    const name = { start: gatewayChannels.callStart, end: gatewayChannels.callEnd, refused: gatewayChannels.callRefused }[kind]
    const listener = (message: unknown) => {
      const m = message as { gatewayId: string; requestId: string }
      if (m.gatewayId === chain.gateway.id) published[kind].push(m)
    }
    diagnosticsChannel.subscribe(name, listener)
    return () => diagnosticsChannel.unsubscribe(name, listener)
  })
  const reader = new TestReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const stopOtel = instrumentGateway(chain.gateway, { meterProvider })
  stops.push(async () => {
    stopOtel()
    for (const unsubscribe of listeners) unsubscribe()
    await chain.close()
    await meterProvider.shutdown()
  })
  return {
    chain,
    published,
    async refusedPoints() {
      const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics }
      return resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.filter((m) => m.descriptor.name === 'model_gateway.call.refused').flatMap((m) => m.dataPoints as DataPoint<number>[]),
      )
    },
  }
}

const send = (c: LedgerChain, d: (typeof DIALECTS)[0], model?: string) =>
  call(`${c.url}${d.path(false)}`, {
    headers: d.headers(KEY_A),
    body: { ...d.body({ usage: d.usage }, false), ...(model ? { model } : {}) },
  })

describe('calls the ledger refuses', () => {
  it('a 429 is published on call:refused (no call:start, no call:end, no usage) and counted with its reason', async () => {
    const w = await watched({ limits: { owners: { requestsPerMinute: 1 } } })
    expect((await send(w.chain, CHAT)).status).toBe(200)
    const refused = [await send(w.chain, CHAT), await send(w.chain, CLAUDE)]
    expect(refused.map((r) => r.status)).toEqual([429, 429])
    const ids = refused.map((r) => r.headers['x-request-id'])
    expect(w.published.refused).toEqual([
      expect.objectContaining({
        requestId: ids[0],
        owner: OWNER_A,
        operation: 'chat.completions',
        model: 'gpt-4o-mini',
        provider: 'openai',
        stream: false,
        status: 429,
        error: 'rate_limit_exceeded',
      }),
      expect.objectContaining({
        requestId: ids[1],
        model: 'claude-haiku-4-5',
        provider: 'anthropic',
        status: 429,
        error: 'rate_limit_exceeded',
      }),
    ])
    expect(w.published.refused[0]).not.toHaveProperty('usage')
    for (const kind of ['start', 'end'] as const) {
      expect(w.published[kind].map((m) => m.requestId)).not.toContain(ids[0])
      expect(w.published[kind]).toHaveLength(1)
    }
    expect(w.chain.usage).toHaveLength(1)
    const points = await w.refusedPoints()
    expect(points.map((p) => [p.attributes['gen_ai.request.model'], p.attributes['error.type'], p.value])).toEqual([
      ['gpt-4o-mini', 'rate_limit_exceeded', 1],
      ['claude-haiku-4-5', 'rate_limit_exceeded', 1],
    ])
    expect(points[0]?.attributes['gen_ai.operation.name']).toBe('chat')
  })

  it('failing closed on a store that cannot answer: 503 published and counted as store_unavailable', async () => {
    const port = await freePort()
    const store = recommendedKeyv(`ledger-refused-${process.pid}`, `redis://127.0.0.1:${port}`)
    const w = await watched({ store, limits: { owners: { requestsPerMinute: 10 }, failClosed: true } })
    const res = await send(w.chain, CHAT)
    expect(res.status).toBe(503)
    expect(w.published.refused).toEqual([
      expect.objectContaining({ requestId: res.headers['x-request-id'], status: 503, error: 'store_unavailable' }),
    ])
    expect(w.published.end).toEqual([])
    const points = await w.refusedPoints()
    expect(points.map((p) => [p.attributes['error.type'], p.value])).toEqual([['store_unavailable', 1]])
  }, 15_000)

  it('nothing is published for what is not the ledger’s refusal: a limits function that throws, an unknown model', async () => {
    const w = await watched({
      limits: {
        owners: () => {
          throw new Error('plan lookup failed')
        },
      },
    })
    expect((await send(w.chain, CHAT)).status).toBe(500)
    expect((await send(w.chain, CHAT, 'no-such-model')).status).toBe(404)
    expect(w.published).toEqual({ start: [], end: [], refused: [] })
    expect(await w.refusedPoints()).toEqual([])
  })
})
