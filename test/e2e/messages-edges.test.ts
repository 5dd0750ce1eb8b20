import { Stream } from '@anthropic-ai/sdk/core/streaming'
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EVENTS, type MessagesChain, MODELS, startMessagesChain } from '../support/anthropic-upstream.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { EXPRESS_KINDS, KOA_KINDS, NODE_KINDS, type ServerKind } from '../support/servers.js'
import { cutAfterEvents, sseEvents } from '../support/sse-client.js'

const HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const streamBody = { model: MODELS.slow, max_tokens: 16, messages: [{ role: 'user', content: 'resume me' }], stream: true }

/** What Claude Code sends first, before any call: `HEAD /` with no key (from a recorded session). */
const probe = (url: string) =>
  call(`${url}/`, { method: 'HEAD', headers: { 'user-agent': 'Bun/1.4.0', accept: '*/*', 'accept-encoding': 'gzip, deflate, br, zstd' } })

describe("Claude Code's first request, HEAD /, is answered as a host answers an unknown path", () => {
  const kinds: Array<[ServerKind, string]> = [
    [NODE_KINDS[0]!, 'the gateway itself, a 404 without a body'],
    [NODE_KINDS[1]!, "the host's handler, through next()"],
    [EXPRESS_KINDS[0]!, "Express's own 404, through next()"],
    [KOA_KINDS[0]!, "Koa's own 404, through next()"],
  ]
  for (const [kind, who] of kinds) {
    it(`${kind.name}: ${who}`, async () => {
      const errors: string[] = []
      const chain = await startMessagesChain(kind, { logger: { info() {}, warn: (m) => errors.push(m), error: (m) => errors.push(m) } })
      try {
        // Claude Code probes its base URL: the gateway's mount.
        const res = await probe(chain.url)
        expect(res.status).toBe(404)
        expect(res.text).toBe('')
        expect(errors).toEqual([])
        // Nothing was broken by it: the next call is served.
        const next = await call(`${chain.url}/v1/messages`, { headers: HEADERS, body: { ...streamBody, model: 'claude-gateway-test' } })
        expect(next.status).toBe(200)
      } finally {
        await chain.close()
      }
    })
  }
})

describe('a resumable Messages stream, cut and resumed through the Recoveries API', () => {
  let chain: MessagesChain
  beforeAll(async () => {
    chain = await startMessagesChain(NODE_KINDS[0]!, { recovery: { streams: 'finish' } })
  })
  afterAll(() => chain.close())

  const recordOf = (requestId: string) =>
    eventually(async () => {
      const res = await call(`${chain.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 ? (res.json as { response: { stream_raw: string } }) : undefined
    })

  it('numbers each event with an id line at the top of its own block, where the SDK still reads the event', async () => {
    const cut = await cutAfterEvents(`${chain.url}/v1/messages`, HEADERS, streamBody, 3)
    const record = await recordOf(cut.requestId)
    const raw = record.response.stream_raw
    // Each upstream event, whole, after its number: nothing else added, nothing reordered.
    expect(raw).toBe(EVENTS.map((event, i) => `id: ${i + 1}\n${event}`).join(''))
    expect(sseEvents(cut.received)).toEqual(EVENTS.slice(0, 3).map((event, i) => `id: ${i + 1}\n${event}`))
  })

  it('resumes after the last event the client got, and the SDK reads the resumed stream, ids and all', async () => {
    const cut = await cutAfterEvents(`${chain.url}/v1/messages`, HEADERS, streamBody, 3)
    const resumed = await fetch(`${chain.url}/v1/recoveries/${cut.requestId}/stream`, {
      headers: { ...bearer(KEY_A), 'last-event-id': '3' },
    })
    expect(resumed.status).toBe(200)
    const events: RawMessageStreamEvent[] = []
    for await (const event of Stream.fromSSEResponse<RawMessageStreamEvent>(resumed, new AbortController())) events.push(event)
    // The SDK reads every named event after the third (the ping among the first three), and each whole.
    expect(events).toEqual(EVENTS.slice(3).map((event) => JSON.parse(event.slice(event.indexOf('data: ') + 6))))
    expect(events.map((event) => event.type)).toEqual([
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    // And the two parts make the stream as it was kept.
    const record = await recordOf(cut.requestId)
    const again = await call(`${chain.url}/v1/recoveries/${cut.requestId}/stream`, { headers: { ...bearer(KEY_A), 'last-event-id': '3' } })
    expect(cut.received + again.text).toBe(record.response.stream_raw)
  })
})
