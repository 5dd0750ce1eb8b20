import Anthropic, { AuthenticationError, NotFoundError } from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EVENTS, MESSAGE, type MessagesChain, MODELS, OVERLOADED, startMessagesChain, TOKEN_COUNT } from '../support/anthropic-upstream.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call } from '../support/http.js'
import { EXPRESS_KINDS, KOA_KINDS, NODE_KINDS, type ServerKind } from '../support/servers.js'

const MODEL = 'claude-gateway-test'
/** What Claude Code 2.1 sends besides its body (its betas and both key headers), from a recorded session. */
const BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27'
const claudeCodeHeaders = (key: string) => ({
  'anthropic-version': '2023-06-01',
  'anthropic-beta': BETAS,
  'anthropic-dangerous-direct-browser-access': 'true',
  'x-api-key': key,
  authorization: `Bearer ${key}`,
  'x-app': 'cli',
  'x-stainless-retry-count': '0',
})
const body = <T extends object>(extra?: T) => ({
  model: MODEL,
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'Hello' }],
  ...(extra as T),
})

/** How many times the upstream got a header, counted in its raw list (Node joins repeats in `headers`). */
const timesSent = (rawHeaders: string[], name: string) =>
  rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]?.toLowerCase() === name).length

const client = (chain: MessagesChain, key = KEY_A) => new Anthropic({ baseURL: chain.url, apiKey: key, maxRetries: 0 })

/** The passthrough cases, run through each server kind given. */
function passthrough(kind: ServerKind) {
  describe(`Messages passthrough, ${kind.name}`, () => {
    let chain: MessagesChain
    beforeAll(async () => {
      chain = await startMessagesChain(kind)
    })
    afterAll(() => chain.close())
    const last = () => chain.upstream.requests.at(-1)!

    it('answers the SDK with the upstream message byte for byte, its request id in request-id and x-request-id', async () => {
      const response = await client(chain).messages.create(body()).asResponse()
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(MESSAGE)
      const id = response.headers.get('x-request-id')
      expect(id).toMatch(/^[0-9A-Z]{26}$/)
      expect(response.headers.get('request-id')).toBe(id)
      const { data, request_id } = await client(chain).messages.create(body()).withResponse()
      expect(data.content).toEqual([{ type: 'text', text: 'Hello from upstream' }])
      expect(request_id).toMatch(/^[0-9A-Z]{26}$/)
    })

    it("sends the upstream the client's version and betas as they came, one of each, and the gateway's key only", async () => {
      const sdk = client(chain)
      await sdk.beta.messages.create({ ...body(), betas: ['interleaved-thinking-2025-05-14'] })
      const upstream = last()
      expect(upstream.path).toBe('/v1/messages')
      expect(upstream.headers['anthropic-version']).toBe('2026-10-21')
      expect(upstream.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
      expect(timesSent(upstream.rawHeaders, 'anthropic-version')).toBe(1)
      expect(upstream.headers['x-api-key']).toBe(UPSTREAM_KEY)
      expect(upstream.headers.authorization).toBeUndefined()
      expect(JSON.stringify(upstream.headers)).not.toContain(KEY_A)
    })

    it('streams the upstream events byte for byte, and the SDK reads them as a message', async () => {
      const response = await client(chain)
        .messages.create(body({ stream: true as const }))
        .asResponse()
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'))
      expect(await response.text()).toBe(EVENTS.join(''))
      const message = await client(chain).messages.stream(body()).finalMessage()
      expect(message.content).toEqual([{ type: 'text', text: 'Hello stream' }])
      expect(message.usage.output_tokens).toBe(5)
    })
  })
}

passthrough(NODE_KINDS[0]!)
passthrough(EXPRESS_KINDS[1]!)
passthrough(KOA_KINDS[1]!)

describe('Messages calls as Claude Code and other clients make them', () => {
  let chain: MessagesChain
  beforeAll(async () => {
    chain = await startMessagesChain(NODE_KINDS[0]!)
  })
  afterAll(() => chain.close())
  const last = () => chain.upstream.requests.at(-1)!
  const post = (headers: Record<string, string>, payload: unknown = body({ stream: true })) =>
    call(`${chain.url}/v1/messages?beta=true`, { headers, body: payload })

  it("forwards Claude Code's betas and version unchanged, and relays its stream byte for byte", async () => {
    const res = await post(claudeCodeHeaders(KEY_A))
    expect(res.status).toBe(200)
    expect(res.text).toBe(EVENTS.join(''))
    expect(res.headers['request-id']).toBe(res.headers['x-request-id'])
    const upstream = last()
    expect(upstream.headers['anthropic-beta']).toBe(BETAS)
    expect(upstream.headers['anthropic-version']).toBe('2023-06-01')
    expect(upstream.headers['x-api-key']).toBe(UPSTREAM_KEY)
    expect(upstream.headers.authorization).toBeUndefined()
    // Only what the dialect forwards: a browser-access flag or an app name means nothing upstream.
    expect(upstream.headers['anthropic-dangerous-direct-browser-access']).toBeUndefined()
    expect(upstream.body).toBe(JSON.stringify(body({ stream: true })))
  })

  it("sends the upstream's configured version to a client that sent none, and renames the model in place", async () => {
    const payload = `{"model": "claude-renamed", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}`
    const res = await post({ 'x-api-key': KEY_A, 'content-type': 'application/json' }, payload)
    expect(res.status).toBe(200)
    expect(timesSent(last().rawHeaders, 'anthropic-version')).toBe(1)
    expect(last().headers['anthropic-version']).toBe('2023-06-01')
    expect(last().headers['anthropic-beta']).toBeUndefined()
    expect(last().body).toBe(payload.replace('"claude-renamed"', '"claude-upstream-name"'))
  })

  it("replays a repeated Idempotency-Key with the first call's id in both request id headers, and calls upstream once", async () => {
    const before = chain.upstream.requests.length
    const headers = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01', 'idempotency-key': 'messages-replay-1' }
    const first = await post(headers, body())
    const again = await post(headers, body())
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.text).toBe(first.text)
    expect(again.headers['x-request-id']).toBe(first.headers['x-request-id'])
    expect(again.headers['request-id']).toBe(first.headers['x-request-id'])
    expect(chain.upstream.requests.length).toBe(before + 1)
  })

  it('takes the key from x-api-key or from Authorization: Bearer, and x-api-key first when both are sent', async () => {
    expect((await post({ 'x-api-key': KEY_A })).status).toBe(200)
    expect((await post({ authorization: `Bearer ${KEY_A}` })).status).toBe(200)
    expect((await post({ 'x-api-key': KEY_A, authorization: 'Bearer sk-wrong' })).status).toBe(200)
    const refused = await post({ 'x-api-key': 'sk-wrong', authorization: `Bearer ${KEY_A}` })
    expect(refused.status).toBe(401)
    expect(refused.json).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.any(String) },
      request_id: refused.headers['x-request-id'],
    })
    expect(refused.headers['request-id']).toBe(refused.headers['x-request-id'])
  })

  it('refuses a wrong key as the SDK expects: an AuthenticationError with the request id', async () => {
    const error = await client(chain, 'sk-wrong')
      .messages.create(body())
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    const refusal = error as AuthenticationError
    expect(refusal.type).toBe('authentication_error')
    expect(refusal.requestID).toMatch(/^[0-9A-Z]{26}$/)
    expect(refusal.error).toMatchObject({ type: 'error', request_id: refusal.requestID })
  })

  it('answers an unknown model with a NotFoundError of type not_found_error, and calls nothing upstream', async () => {
    const before = chain.upstream.requests.length
    const error = await client(chain)
      .messages.create(body({ model: 'claude-nope' }))
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as NotFoundError).type).toBe('not_found_error')
    expect((error as NotFoundError).apiMessage).toContain('claude-nope')
    expect(chain.upstream.requests.length).toBe(before)
  })

  it('passes an upstream error on verbatim, with its status', async () => {
    const res = await post({ 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }, body({ model: MODELS.overloaded }))
    expect(res.status).toBe(529)
    expect(res.text).toBe(OVERLOADED)
  })

  it('counts tokens through to an Anthropic upstream, byte for byte', async () => {
    const sdk = client(chain)
    const response = await sdk.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }] }).asResponse()
    expect(await response.text()).toBe(TOKEN_COUNT)
    expect(last().path).toBe('/v1/messages/count_tokens')
    expect(last().headers['anthropic-version']).toBe('2026-10-21')
    expect(await sdk.messages.countTokens({ model: 'claude-renamed', messages: [{ role: 'user', content: 'x' }] })).toEqual({
      input_tokens: 42,
    })
    expect(JSON.parse(last().body).model).toBe('claude-upstream-name')
  })

  it('answers an API the gateway does not offer (message batches) with a NotFoundError the SDK reads', async () => {
    const error = await client(chain)
      .messages.batches.list()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as NotFoundError).type).toBe('not_found_error')
    expect((error as NotFoundError).apiMessage).toContain('/v1/messages/batches')
  })

  it('lists and retrieves models in Anthropic shape for the SDK', async () => {
    const sdk = client(chain)
    const ids: string[] = []
    for await (const model of sdk.models.list()) ids.push(model.id)
    expect(ids).toContain(MODEL)
    expect(ids).toContain('gpt-4o-mini')
    const model = await sdk.models.retrieve('claude-renamed')
    expect(model).toMatchObject({ type: 'model', id: 'claude-renamed', display_name: 'claude-renamed' })
    expect(model.created_at).toBe(new Date(1759000001 * 1000).toISOString())
    const missing = await sdk.models.retrieve('claude-nope').catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(NotFoundError)
    expect((missing as NotFoundError).requestID).toMatch(/^[0-9A-Z]{26}$/)
  })
})
