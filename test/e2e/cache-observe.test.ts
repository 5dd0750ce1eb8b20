import diagnosticsChannel from 'node:diagnostics_channel'
import { type DataPoint, type Histogram, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayChannels } from '../../src/index.js'
import type { CacheMessage, CallEndMessage } from '../../src/observe/channels.js'
import { instrumentGateway } from '../../src/otel/index.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

// What a hit and a miss tell an operator: the cache channel, `call:end`'s `cache`, the span attribute and the counter.
describe('the response cache, observed', () => {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new TestReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const cacheMessages: CacheMessage[] = []
  const ends: CallEndMessage[] = []
  const onCache = (message: unknown) => cacheMessages.push(message as CacheMessage)
  const onEnd = (message: unknown) => ends.push(message as CallEndMessage)
  let fx: Fixture
  let stop: () => void
  beforeAll(async () => {
    fx = await startFixture(NODE, { cache: {} })
    stop = instrumentGateway(fx.gateway, { tracerProvider, meterProvider })
    diagnosticsChannel.subscribe(gatewayChannels.cache, onCache)
    diagnosticsChannel.subscribe(gatewayChannels.callEnd, onEnd)
  })
  afterAll(async () => {
    diagnosticsChannel.unsubscribe(gatewayChannels.cache, onCache)
    diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, onEnd)
    stop()
    await fx.close()
    await tracerProvider.shutdown()
  })

  async function counted(): Promise<Record<string, number>> {
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics }
    const points = resourceMetrics.scopeMetrics.flatMap((scope) =>
      scope.metrics
        .filter((m) => m.descriptor.name === 'model_gateway.cache')
        .flatMap((m) => m.dataPoints as Array<DataPoint<number | Histogram>>),
    )
    const out: Record<string, number> = {}
    for (const point of points) out[String(point.attributes['model_gateway.cache'])] = point.value as number
    return out
  }

  it('a miss then a hit: channel events, call:end, span attributes and the hit/miss counter', async () => {
    const body = chatBody('observe the cache')
    const first = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body })
    const second = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body })
    const ids = [first.headers['x-request-id'], second.headers['x-request-id']]
    const ours = cacheMessages.filter((m) => ids.includes(m.requestId))
    expect(ours.map((m) => m.result)).toEqual(['miss', 'stored', 'hit'])
    expect(ours[2]?.ageMs).toBeGreaterThanOrEqual(0)
    const endOf = (id: unknown) => ends.find((m) => m.requestId === id)
    expect(endOf(ids[0])).toMatchObject({ cache: 'miss', status: 200 })
    expect(endOf(ids[1])).toMatchObject({ cache: 'hit', status: 200, cost: 0, upstream: 'mock', delivered: true })
    const spans = exporter.getFinishedSpans().filter((s) => ids.includes(s.attributes['model_gateway.request_id'] as string))
    expect(spans.map((s) => s.attributes['model_gateway.cache']).sort()).toEqual(['hit', 'miss'])
    expect(await counted()).toMatchObject({ hit: 1, miss: 1 })
  })
})
