import { afterAll, beforeAll, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { geminiBody } from '../support/bodies.js'
import { type Fixture, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { goog } from '../support/gemini.js'
import { call, eventually, open } from '../support/http.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { describeMatrix } from '../support/servers.js'

describeMatrix('Gemini SSE framing', (kind) => {
  let fx: Fixture
  let upstream: ScriptedUpstream
  const usage: UsageEvent[] = []
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    fx = await startFixture(kind, {
      // A base path on the upstream and a different upstream model name: both must shape the upstream URL.
      upstreams: { scripted: { type: 'gemini', baseUrl: `${upstream.url}/proxy/`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gemini-scripted', upstream: 'scripted', upstreamModel: 'gemini-2.5-pro' }],
      onUsage: (u) => usage.push(u),
    })
  })
  afterAll(async () => {
    await fx.close()
    await upstream.close()
  })

  const text =
    'data: {"candidates":[{"content":{"parts":[{"text":"Hé"}],"role":"model"},"index":0}],"responseId":"r1"}\r\n\r\n' +
    ': a comment the relay keeps\r\n\r\n' +
    'data: {"candidates":[{"content":{"parts":[{"text":"llo 世界"}],"role":"model"},\r\ndata: "index":0}],"responseId":"r1"}\r\n\r\n' +
    'data: {"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}],\n' +
    'data: "usageMetadata":{"promptTokenCount":9,"toolUsePromptTokenCount":2,"candidatesTokenCount":4,"thoughtsTokenCount":6,"totalTokenCount":21}}\n\n'
  const bytes = Buffer.from(text)
  // Cut inside JSON, inside a `\r\n\r\n` separator, inside `data:`, and inside two- and three-byte characters.
  const at = (needle: string, plus: number, from = 0) => bytes.indexOf(needle, from) + plus
  const cuts = [
    at('"Hé', 3),
    at('\r\n\r\n', 3),
    at('data:', 2, 10),
    at('世', 1),
    at('世', 2),
    at('\r\ndata: "index"', 1),
    bytes.length - 1,
  ].sort((a, b) => a - b)
  const pieces = [0, ...cuts].map((start, i) => bytes.subarray(start, cuts[i] ?? bytes.length))

  it('relays every piece as it arrives, byte for byte, even mid-event and mid-character', async () => {
    upstream.script(pieces, { gated: true })
    const res = await open(`${fx.url}/v1beta/models/gemini-scripted:streamGenerateContent?alt=sse`, {
      headers: goog(KEY_A),
      body: geminiBody('frames'),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream')
    const body = res.body[Symbol.asyncIterator]()
    let received = Buffer.alloc(0)
    for (let i = 0; i < pieces.length; i++) {
      upstream.release()
      const expected = Buffer.concat(pieces.slice(0, i + 1))
      while (received.length < expected.length) {
        const next = await body.next()
        if (next.done) break
        received = Buffer.concat([received, next.value as Buffer])
      }
      // The upstream has not been let to send piece i + 1 yet: whatever arrived was relayed unbuffered.
      expect(received.equals(expected), `after piece ${i}`).toBe(true)
    }
    expect((await body.next()).done).toBe(true)
    expect(received.equals(bytes)).toBe(true)

    const sent = upstream.requests.at(-1)!
    expect(sent.path).toBe('/proxy/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse')
    expect(sent.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
    expect(JSON.stringify(sent)).not.toContain(KEY_A)
    const requestId = res.headers['x-request-id'] as string
    const event = await eventually(() => usage.find((u) => u.requestId === requestId))
    expect(event).toMatchObject({
      model: 'gemini-scripted',
      endpoint: 'generateContent',
      input_tokens: 11,
      output_tokens: 10,
      total_tokens: 21,
      recovered: false,
    })
  })

  it('relays the same stream cut into many small writes unchanged', async () => {
    upstream.script(Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7)))
    const res = await call(`${fx.url}/v1beta/models/gemini-scripted:streamGenerateContent?alt=sse`, {
      headers: goog(KEY_A),
      body: geminiBody('small'),
    })
    expect(res.status).toBe(200)
    expect(res.text).toBe(text)
  })
})
