import diagnosticsChannel from 'node:diagnostics_channel'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import { gatewayChannels } from '../../src/index.js'
import type { Gateway, GatewayOptions, UsageEvent } from '../../src/types.js'

const CLIENT_KEY = 'sk-client-secret'
const UPSTREAM_KEY = 'sk-upstream-secret'
const PROMPT = 'a prompt nobody may log'

/** An OpenAI-format upstream answering after `?delay` ms (read from the model name `slow-<ms>`). */
async function upstream() {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { model: string }
      const delay = Number(/^slow-(\d+)$/.exec(body.model)?.[1] ?? 0)
      setTimeout(() => {
        const text = JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          model: body.model,
          choices: [],
          usage: { prompt_tokens: 3, completion_tokens: 4 },
        })
        res.writeHead(200, { 'content-type': 'application/json' }).end(text)
      }, delay)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` }
}

async function serve(gateway: Gateway) {
  const server = http.createServer(nodeHandler(gateway))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const chat = (url: string, model: string, signal?: AbortSignal) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: PROMPT }] }),
    signal,
  })

let up: Awaited<ReturnType<typeof upstream>>
const messages: Array<{ channel: string; message: Record<string, unknown> }> = []
const listeners = Object.values(gatewayChannels).map((channel) => {
  const listener = (message: unknown) => messages.push({ channel, message: message as Record<string, unknown> })
  return { channel, listener }
})
const cleanups: Array<() => Promise<void>> = []

function options(extra: Partial<GatewayOptions> = {}): GatewayOptions {
  return {
    upstreams: {
      up: { type: 'openai', baseUrl: up.url, apiKey: UPSTREAM_KEY },
      down: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' },
    },
    models: [
      { id: 'fast', upstream: 'up' },
      { id: 'slow-300', upstream: 'up' },
      { id: 'dead', upstream: 'down' },
    ],
    ...extra,
    auth: { apiKeys: [CLIENT_KEY] },
  } as GatewayOptions
}

async function start(extra: Partial<GatewayOptions> = {}) {
  const gateway = createGateway(options(extra))
  const server = await serve(gateway)
  cleanups.push(async () => {
    server.server.closeAllConnections()
    server.server.close()
    await gateway.close()
  })
  return { gateway, url: server.url }
}

const of = (gateway: Gateway, channel: string) =>
  messages.filter((m) => m.channel === channel && m.message.gatewayId === gateway.id).map((m) => m.message)

async function until(check: () => boolean) {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(check()).toBe(true)
}

beforeAll(async () => {
  up = await upstream()
  for (const { channel, listener } of listeners) diagnosticsChannel.subscribe(channel, listener)
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
  messages.length = 0
})
afterAll(() => {
  for (const { channel, listener } of listeners) diagnosticsChannel.unsubscribe(channel, listener)
  up.server.close()
})

describe('diagnostics channels', () => {
  it('publish start, one upstream attempt and end with usage for a delivered call, and no record', async () => {
    const { gateway, url } = await start()
    const res = await chat(url, 'fast')
    expect(res.status).toBe(200)
    await res.text()
    await until(() => of(gateway, gatewayChannels.callEnd).length === 1)
    const requestId = res.headers.get('x-request-id')
    const [began] = of(gateway, gatewayChannels.callStart)
    expect(began).toEqual({
      gatewayId: gateway.id,
      requestId,
      owner: expect.stringMatching(/^[0-9a-f]{32}$/),
      operation: 'chat.completions',
      model: 'fast',
      stream: false,
    })
    expect(of(gateway, gatewayChannels.upstreamAttempt)).toEqual([
      { gatewayId: gateway.id, requestId, upstream: 'up', model: 'fast', attempt: 1, durationMs: expect.any(Number), status: 200 },
    ])
    expect(of(gateway, gatewayChannels.callEnd)).toEqual([
      {
        ...began,
        status: 200,
        delivered: true,
        recovered: false,
        usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
        durationMs: expect.any(Number),
      },
    ])
    expect(of(gateway, gatewayChannels.recordStored)).toEqual([])
    // Nothing a client or an operator must not see travels on a channel.
    const text = JSON.stringify(messages)
    for (const secret of [CLIENT_KEY, UPSTREAM_KEY, PROMPT]) expect(text).not.toContain(secret)
  })

  it('publish record:stored and a recovered, undelivered end when the client left a call that finished', async () => {
    const { gateway, url } = await start()
    const controller = new AbortController()
    const pending = chat(url, 'slow-300', controller.signal).catch(() => undefined)
    await until(() => of(gateway, gatewayChannels.callStart).length === 1)
    controller.abort()
    await pending
    await until(() => of(gateway, gatewayChannels.callEnd).length === 1)
    const [end] = of(gateway, gatewayChannels.callEnd)
    expect(end).toMatchObject({ status: 200, delivered: false, recovered: true, usage: { total_tokens: 7 } })
    expect(of(gateway, gatewayChannels.recordStored)).toEqual([
      {
        gatewayId: gateway.id,
        requestId: end?.requestId,
        owner: end?.owner,
        operation: 'chat.completions',
        model: 'slow-300',
        reason: 'context canceled',
      },
    ])
  })

  it('publish a failed attempt and an end with the error status when the upstream cannot be reached', async () => {
    const { gateway, url } = await start()
    const res = await chat(url, 'dead')
    expect(res.status).toBe(502)
    await until(() => of(gateway, gatewayChannels.callEnd).length === 1)
    expect(of(gateway, gatewayChannels.upstreamAttempt)).toEqual([
      expect.objectContaining({ upstream: 'down', attempt: 1, error: 'upstream_unreachable' }),
    ])
    expect(of(gateway, gatewayChannels.callEnd)[0]).toMatchObject({ status: 502, delivered: false, recovered: false })
    expect(of(gateway, gatewayChannels.callEnd)[0]).not.toHaveProperty('usage')
  })

  it('keep two gateways apart: each onUsage sees only its own calls, and a throwing one is logged, not fatal', async () => {
    const usages: UsageEvent[] = []
    const errors: unknown[] = []
    const logger = { warn: () => {}, error: (...args: unknown[]) => errors.push(args) }
    const a = await start({ onUsage: (u) => usages.push(u) })
    const b = await start({
      onUsage: () => {
        throw new Error('hook failed')
      },
      logger,
    })
    await (await chat(b.url, 'fast')).text()
    await (await chat(a.url, 'fast')).text()
    await until(() => usages.length === 1 && errors.length === 1)
    expect(usages[0]).toMatchObject({
      model: 'fast',
      endpoint: 'chat.completions',
      input_tokens: 3,
      output_tokens: 4,
      total_tokens: 7,
      recovered: false,
    })
    expect(of(a.gateway, gatewayChannels.callEnd)).toHaveLength(1)
    expect(of(b.gateway, gatewayChannels.callEnd)).toHaveLength(1)
    expect(String(errors[0])).toContain('onUsage threw')
    // A closed gateway stops listening: its hook is not called for calls it never served.
    await a.gateway.close()
    await (await chat(b.url, 'fast')).text()
    await until(() => of(b.gateway, gatewayChannels.callEnd).length === 2)
    expect(usages).toHaveLength(1)
  })
})
