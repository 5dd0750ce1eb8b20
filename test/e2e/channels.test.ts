import diagnosticsChannel from 'node:diagnostics_channel'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { gatewayChannels } from '../../src/index.js'
import type { Gateway, GatewayOptions, UsageEvent } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]
const PROMPT = 'a prompt nobody may log'

const messages: Array<{ channel: string; message: Record<string, unknown> }> = []
const listeners = Object.values(gatewayChannels).map((channel) => ({
  channel,
  listener: (message: unknown) => messages.push({ channel, message: message as Record<string, unknown> }),
}))
const fixtures: Fixture[] = []

/** A fixture whose models include `dead`, on an upstream nothing listens on. */
async function start(overrides: Partial<GatewayOptions> = {}): Promise<Fixture> {
  const fx = await startFixture(NODE, overrides)
  fixtures.push(fx)
  return fx
}

const of = (gateway: Gateway, channel: string) =>
  messages.filter((m) => m.channel === channel && m.message.gatewayId === gateway.id).map((m) => m.message)

beforeAll(() => {
  for (const { channel, listener } of listeners) diagnosticsChannel.subscribe(channel, listener)
})
afterEach(async () => {
  for (const fx of fixtures.splice(0)) await fx.close()
  messages.length = 0
})
afterAll(() => {
  for (const { channel, listener } of listeners) diagnosticsChannel.unsubscribe(channel, listener)
})

describe('diagnostics channels', () => {
  it('publish start, one upstream attempt and end with usage for a delivered call, and no record', async () => {
    const { gateway, url } = await start()
    const res = await call(`${url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody(PROMPT, { mock: { usage: { prompt_tokens: 3, completion_tokens: 4 } } }),
    })
    expect(res.status).toBe(200)
    await eventually(() => of(gateway, gatewayChannels.callEnd).length === 1)
    const requestId = res.headers['x-request-id']
    const [began] = of(gateway, gatewayChannels.callStart)
    expect(began).toEqual({
      gatewayId: gateway.id,
      requestId,
      owner: expect.stringMatching(/^[0-9a-f]{32}$/),
      operation: 'chat.completions',
      model: 'gpt-4o-mini',
      stream: false,
      provider: 'openai',
      upstreamModel: 'gpt-4o-mini',
      startedAt: expect.any(Number),
    })
    expect(of(gateway, gatewayChannels.upstreamAttempt)).toEqual([
      { gatewayId: gateway.id, requestId, upstream: 'mock', model: 'gpt-4o-mini', attempt: 1, durationMs: expect.any(Number), status: 200 },
    ])
    expect(of(gateway, gatewayChannels.callEnd)).toEqual([
      {
        ...began,
        status: 200,
        delivered: true,
        delivery: 'delivered',
        recovered: false,
        usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
        complete: true,
        finishReasons: ['stop'],
        upstream: 'mock',
        keyAlias: 'key-1',
        durationMs: expect.any(Number),
      },
    ])
    expect(of(gateway, gatewayChannels.recordStored)).toEqual([])
    // Nothing a client or an operator must not see travels on a channel.
    const text = JSON.stringify(messages)
    for (const secret of [KEY_A, UPSTREAM_KEY, PROMPT]) expect(text).not.toContain(secret)
  })

  it('publish record:stored and a recovered, undelivered end when the client left a call that finished', async () => {
    const { gateway, url } = await start()
    await sendThenAbort(`${url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('left', { mock: { delay_ms: 300 } })),
      afterMs: 50,
    })
    await eventually(() => of(gateway, gatewayChannels.callEnd).length === 1)
    const [end] = of(gateway, gatewayChannels.callEnd)
    expect(end).toMatchObject({
      status: 200,
      delivered: false,
      delivery: 'undelivered',
      recovered: true,
      usage: { total_tokens: expect.any(Number) },
    })
    expect(of(gateway, gatewayChannels.recordStored)).toEqual([
      {
        gatewayId: gateway.id,
        requestId: end?.requestId,
        owner: end?.owner,
        operation: 'chat.completions',
        model: 'gpt-4o-mini',
        reason: 'context canceled',
      },
    ])
  })

  it('publish a failed attempt and an end with the error status when the upstream cannot be reached', async () => {
    const { gateway, url } = await start({
      upstreams: { dead: { type: 'openai', baseUrl: `http://127.0.0.1:${await freePort()}/v1` } },
      models: [{ id: 'dead', upstream: 'dead' }],
    })
    const res = await call(`${url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { model: 'dead' }) })
    expect(res.status).toBe(502)
    await eventually(() => of(gateway, gatewayChannels.callEnd).length === 1)
    expect(of(gateway, gatewayChannels.upstreamAttempt)).toEqual([
      expect.objectContaining({ upstream: 'dead', attempt: 1, error: 'upstream_unreachable' }),
    ])
    expect(of(gateway, gatewayChannels.callEnd)[0]).toMatchObject({ status: 502, delivered: false, recovered: false })
    expect(of(gateway, gatewayChannels.callEnd)[0]).not.toHaveProperty('usage')
    expect(of(gateway, gatewayChannels.callEnd)[0]).not.toHaveProperty('finishReasons')
  })

  it('keep two gateways apart: each onUsage sees only its own calls, and a throwing one is logged, not fatal', async () => {
    const usages: UsageEvent[] = []
    const a = await start({ onUsage: (u) => usages.push(u) })
    const b = await start({
      onUsage: () => {
        throw new Error('hook failed')
      },
    })
    const chat = (fx: Fixture) => call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    await chat(b)
    await chat(a)
    await eventually(() => usages.length === 1 && b.logs.some((log) => log.message.includes('onUsage threw')))
    expect(usages[0]).toMatchObject({ model: 'gpt-4o-mini', endpoint: 'chat.completions', recovered: false })
    expect(of(a.gateway, gatewayChannels.callEnd)).toHaveLength(1)
    expect(of(b.gateway, gatewayChannels.callEnd)).toHaveLength(1)
    // A closed gateway stops listening: its hook is not called for calls it never served.
    await a.gateway.close()
    await chat(b)
    await eventually(() => of(b.gateway, gatewayChannels.callEnd).length === 2)
    expect(usages).toHaveLength(1)
  })
})
