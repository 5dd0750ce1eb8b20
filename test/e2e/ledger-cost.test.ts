import { type DataPoint, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { instrumentGateway } from '../../src/otel/index.js'
import { KEY_A } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { DIALECTS, type LedgerChain, startLedgerChain } from '../support/ledger.js'

// Cost from the upstream's own usage, exact to the nano-dollar, for every dialect and every way a stream ends.
describe('cost of a call, from pricing', () => {
  let chain: LedgerChain
  beforeAll(async () => {
    chain = await startLedgerChain({ recovery: { streams: 'finish' } })
  })
  afterAll(() => chain.close())

  const eventOf = (requestId: string) => eventually(() => chain.usage.find((u) => u.requestId === requestId))

  for (const d of DIALECTS) {
    it(`${d.name}: a JSON answer carries its breakdown and exact cost`, async () => {
      const res = await call(`${chain.url}${d.path(false)}`, { headers: d.headers(KEY_A), body: d.body({ usage: d.usage }, false) })
      expect(res.status).toBe(200)
      const event = await eventOf(res.headers['x-request-id'] as string)
      expect(event).toMatchObject({ ...d.counts, cost: d.cost, complete: true, recovered: false, model: d.model })
    })

    it(`${d.name}: a stream carries the usage of its final events and exact cost`, async () => {
      const res = await call(`${chain.url}${d.path(true)}`, {
        headers: d.headers(KEY_A),
        body: d.body({ usage: d.usage, chunks: 4 }, true),
      })
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
      const event = await eventOf(res.headers['x-request-id'] as string)
      expect(event).toMatchObject({ ...d.counts, cost: d.cost, complete: true })
    })

    it(`${d.name}: a stream whose client left is billed in full once the upstream finishes it`, async () => {
      const before = chain.usage.length
      const body = d.body({ usage: d.usage, chunks: 6, chunk_delay_ms: 20, delay_ms: 100 }, true)
      await sendThenAbort(`${chain.url}${d.path(true)}`, { headers: d.headers(KEY_A), body: JSON.stringify(body), afterMs: 20 })
      const event = await eventually(() => chain.usage.slice(before).find((u) => u.recovered))
      expect(event).toMatchObject({ ...d.counts, cost: d.cost, complete: true, recovered: true })
    })
  }

  it('a stream the upstream never finished is reported with complete: false and the usage it had sent', async () => {
    const gemini = DIALECTS.find((d) => d.model === 'gemini-2.5-flash')
    if (!gemini) throw new Error('no Gemini case')
    // The mock reports Gemini's usage in its last event only: the events before the cut carry none.
    const res = await call(`${chain.url}${gemini.path(true)}`, {
      headers: gemini.headers(KEY_A),
      body: gemini.body({ usage: gemini.usage, chunks: 6, destroy_after_frames: 3 }, true),
    })
    const event = await eventOf(res.headers['x-request-id'] as string)
    expect(event).toMatchObject({ input_tokens: 0, output_tokens: 0, cost: 0, complete: false })
  })

  it('an Anthropic stream cut before its message_delta is billed for the input message_start reported', async () => {
    const claude = DIALECTS.find((d) => d.model === 'claude-haiku-4-5')
    if (!claude) throw new Error('no Anthropic case')
    const res = await call(`${chain.url}${claude.path(true)}`, {
      headers: claude.headers(KEY_A),
      body: claude.body({ usage: claude.usage, chunks: 6, destroy_after_frames: 2 }, true),
    })
    const event = await eventOf(res.headers['x-request-id'] as string)
    // message_start says the input and a first output token: 900 × 1 + 60 × 0.1 + 40 × 1.25 + 1 × 5 µ$.
    expect(event).toMatchObject({
      input_tokens: 1000,
      cached_input_tokens: 60,
      cache_write_tokens: 40,
      output_tokens: 1,
      complete: false,
      cost: 961_000,
    })
  })

  it('a model without a price reports no cost', async () => {
    const priced = await startLedgerChain({ pricing: { 'gpt-4o-mini': { input: 1, output: 1 } } })
    try {
      const claude = DIALECTS.find((d) => d.model === 'claude-haiku-4-5')
      if (!claude) throw new Error('no Anthropic case')
      const res = await call(`${priced.url}${claude.path(false)}`, {
        headers: claude.headers(KEY_A),
        body: claude.body({ usage: claude.usage }, false),
      })
      const event = await eventually(() => priced.usage.find((u) => u.requestId === res.headers['x-request-id']))
      expect(event).toMatchObject(claude.counts)
      expect(event).not.toHaveProperty('cost')
    } finally {
      await priced.close()
    }
  })
})

/** A reader the test collects from on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

describe('cost as an OpenTelemetry metric', () => {
  it('adds each priced call’s nano-dollars to model_gateway.call.cost', async () => {
    const chain = await startLedgerChain()
    const reader = new TestReader()
    const meterProvider = new MeterProvider({ readers: [reader] })
    const stop = instrumentGateway(chain.gateway, { meterProvider })
    try {
      for (const d of DIALECTS) {
        const res = await call(`${chain.url}${d.path(false)}`, { headers: d.headers(KEY_A), body: d.body({ usage: d.usage }, false) })
        expect(res.status).toBe(200)
      }
      await eventually(() => chain.usage.length === DIALECTS.length)
      const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics }
      const points = resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.filter((m) => m.descriptor.name === 'model_gateway.call.cost').flatMap((m) => m.dataPoints as DataPoint<number>[]),
      )
      const total = points.reduce((sum, point) => sum + point.value, 0)
      expect(total).toBe(DIALECTS.reduce((sum, d) => sum + d.cost, 0))
      expect(points.find((p) => p.attributes['gen_ai.request.model'] === 'claude-haiku-4-5')?.value).toBe(10_956_000)
    } finally {
      stop()
      await chain.close()
      await meterProvider.shutdown()
    }
  })
})
