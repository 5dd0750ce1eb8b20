import diagnosticsChannel from 'node:diagnostics_channel'
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayChannels } from '../../src/index.js'
import { instrumentGateway } from '../../src/otel/index.js'
import type { UsageEvent } from '../../src/types.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { gpath } from '../support/gemini.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// Claude Code's X-Claude-Code-Session-Id labels each call of a session: it reaches the usage event, call:end and the
// spans (gen_ai.conversation.id), from every dialect's routes, so an operator can sum a session's cost. A malformed
// id is left out and the call goes on; the id is never written to the log.

const SESSION = '6f1c2e0a-5b7d-4c3e-9a8f-0123456789ab'
const HEADER = 'x-claude-code-session-id'
const CLAUDE = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }

const exporter = new InMemorySpanExporter()
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const usage: UsageEvent[] = []
const ends: Array<Record<string, unknown>> = []
const onEnd = (message: unknown) => ends.push(message as Record<string, unknown>)
let fx: Fixture
let stop: () => void

beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, { onUsage: (u) => usage.push(u), pricing: { 'gpt-4o-mini': { input: 1, output: 2 } } })
  stop = instrumentGateway(fx.gateway, { tracerProvider })
  diagnosticsChannel.subscribe(gatewayChannels.callEnd, onEnd)
})
afterAll(async () => {
  diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, onEnd)
  stop()
  await fx.close()
  await tracerProvider.shutdown()
})

/** The usage event, call:end message and spans of one answered request. */
async function seenFor(requestId: string) {
  const event = await eventually(() => usage.find((u) => u.requestId === requestId))
  const end = await eventually(() => ends.find((m) => m.requestId === requestId && m.gatewayId === fx.gateway.id))
  const server = await eventually(() =>
    exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.attributes['model_gateway.request_id'] === requestId),
  )
  const clients = exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === server.spanContext().spanId)
  return { event, end, server, clients }
}

const routes = [
  {
    name: 'Anthropic Messages (translated to an OpenAI model)',
    send: (headers: Record<string, string>, text: string) =>
      call(`${fx.url}/v1/messages`, {
        headers: { ...CLAUDE, ...headers },
        body: { model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: text }] },
      }),
  },
  {
    name: 'OpenAI chat completions',
    send: (headers: Record<string, string>, text: string) =>
      call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), ...headers }, body: chatBody(text) }),
  },
  {
    name: 'Gemini generateContent',
    send: (headers: Record<string, string>, text: string) =>
      call(`${fx.url}${gpath(false)}`, { headers: { 'x-goog-api-key': KEY_A, ...headers }, body: geminiBody(text) }),
  },
]

describe.each(routes)('X-Claude-Code-Session-Id on $name', ({ send }) => {
  it('is the session id of the usage event, call:end and the SERVER and CLIENT spans', async () => {
    const res = await send({ [HEADER]: SESSION }, 'session carried')
    expect(res.status).toBe(200)
    const { event, end, server, clients } = await seenFor(res.headers['x-request-id'] as string)
    expect(event.sessionId).toBe(SESSION)
    expect(end.sessionId).toBe(SESSION)
    expect(server.attributes['gen_ai.conversation.id']).toBe(SESSION)
    expect(clients.length).toBeGreaterThan(0)
    for (const client of clients) expect(client.attributes['gen_ai.conversation.id']).toBe(SESSION)
  })
})

describe('X-Claude-Code-Session-Id, bounded and optional', () => {
  const send = routes[1]!.send

  it('without the header: no session id anywhere', async () => {
    const res = await send({}, 'no session')
    const { event, end, server } = await seenFor(res.headers['x-request-id'] as string)
    expect(event).not.toHaveProperty('sessionId')
    expect(end).not.toHaveProperty('sessionId')
    expect(server.attributes).not.toHaveProperty('gen_ai.conversation.id')
  })

  it.each([
    ['longer than 128 characters', 'a'.repeat(129)],
    ['with a space (as two headers joined)', 'one, two'],
    ['not ASCII', 'séance'],
  ])('a malformed id (%s) is left out; the call is answered', async (_why, value) => {
    const res = await send({ [HEADER]: value }, 'malformed session')
    expect(res.status).toBe(200)
    const { event, end, server } = await seenFor(res.headers['x-request-id'] as string)
    expect(event).not.toHaveProperty('sessionId')
    expect(end).not.toHaveProperty('sessionId')
    expect(server.attributes).not.toHaveProperty('gen_ai.conversation.id')
  })

  it('128 characters is the longest id carried', async () => {
    const longest = 's'.repeat(128)
    const res = await send({ [HEADER]: longest }, 'longest session')
    expect((await seenFor(res.headers['x-request-id'] as string)).event.sessionId).toBe(longest)
  })

  it('is never written to the log, even for a call that fails upstream', async () => {
    const res = await send({ [HEADER]: SESSION }, 'failing session')
    expect(res.status).toBe(200)
    const failed = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), [HEADER]: SESSION },
      body: chatBody('failing session upstream', { mock: { status: 500 } }),
    })
    expect(failed.status).toBeGreaterThanOrEqual(500)
    await eventually(() => fx.logs.length > 0)
    expect(JSON.stringify(fx.logs)).not.toContain(SESSION)
  })

  it('sums a session: every call of it has the id and its cost', async () => {
    const session = 'sum-me-0001'
    const ids: string[] = []
    for (const text of ['first of session', 'second of session']) {
      const res = await send({ [HEADER]: session }, text)
      ids.push(res.headers['x-request-id'] as string)
    }
    const events = await Promise.all(ids.map(async (id) => (await seenFor(id)).event))
    expect(events.every((e) => e.sessionId === session && typeof e.cost === 'number' && e.cost > 0)).toBe(true)
  })
})
