import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call, eventually, listen, type MountedServer, sendThenAbort } from '../support/http.js'
import { serve } from '../support/servers.js'

/** The gateway's key upstream: a `/` and an upper-case letter give every escape a character to stand for. */
const KEY = 'sk-upstream/Key-0123456789'

/** The key as JSON encoders may write it: a first letter escaped, `\/`, mixed-case hex, every character escaped. */
const SPELLINGS = [
  '\\u0073k-upstream\\/Key-0123456789',
  'sk-upstream\\u002f\\u004Bey-012345678\\u0039',
  [...KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(''),
]

/** What the upstream answers next: a status, the pieces of its body (one write each) and how long it waits first. */
interface Answer {
  status?: number
  pieces: string[]
  sse?: boolean
  delayMs?: number
}

const chatAnswer = (content: string) =>
  `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"${content}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
const chatChunk = (content: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`
const CHAT_END =
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
const geminiAnswer = (text: string) =>
  `{"candidates":[{"content":{"role":"model","parts":[{"text":"${text}"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},"modelVersion":"gemini-2.5-flash"}`

/** Every string in a decoded JSON value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(strings)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, inner]) => [key, ...strings(inner)])
  return []
}

/** The JSON values of a body, or of each `data:` line of a stream. */
function decoded(text: string): unknown[] {
  if (!text.includes('data:')) return [JSON.parse(text)]
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:') && line.trim() !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(5)))
}

/** The key reached the client in no form: not its bytes, not any spelling the upstream sent, not once decoded. */
function expectNoKey(text: string, what: string): void {
  expect(text, what).not.toContain(KEY)
  for (const spelling of SPELLINGS) expect(text, what).not.toContain(spelling)
  expect(text, what).not.toContain('0123456789')
  for (const value of decoded(text)) for (const inner of strings(value)) expect(inner, what).not.toContain(KEY)
  expect(text, what).toContain('[redacted]')
}

describe('the gateway’s upstream key, echoed JSON-escaped', () => {
  let next: Answer = { pieces: [] }
  let upstream: MountedServer
  let gateway: Gateway
  let server: MountedServer
  let url: string

  beforeAll(async () => {
    upstream = await listen(
      http.createServer((req, res) => {
        req.resume()
        req.on('end', async () => {
          const answer = next
          if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs))
          res.writeHead(answer.status ?? 200, { 'content-type': answer.sse ? 'text/event-stream' : 'application/json' })
          for (const piece of answer.pieces) {
            res.write(piece)
            await new Promise((resolve) => setImmediate(resolve))
          }
          res.end()
        })
      }),
    )
    gateway = createGateway({
      upstreams: {
        oa: { type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: KEY },
        gm: { type: 'gemini', baseUrl: upstream.url, apiKey: KEY },
      },
      models: [
        { id: 'gpt-4o-mini', upstream: 'oa' },
        { id: 'gemini-2.5-flash', upstream: 'gm' },
      ],
      auth: { apiKeys: [KEY_A] },
    })
    server = await serve(nodeHandler(gateway))
    url = server.url
  })
  afterAll(async () => {
    await server.close()
    await gateway.close()
    await upstream.close()
  })

  const chat = (model: string, extra: Record<string, unknown> = {}) =>
    call(`${url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('hi', { model, ...extra }) })
  const gemini = (model: string, stream = false) => call(`${url}${gpath(stream, model)}`, { headers: goog(KEY_A), body: geminiBody('hi') })

  it.each(SPELLINGS)('is taken out of a passthrough answer and translated ones (%s)', async (spelling) => {
    next = { pieces: [chatAnswer(`the key is ${spelling}`)] }
    const passthrough = await chat('gpt-4o-mini')
    expect(passthrough.status).toBe(200)
    expectNoKey(passthrough.text, 'chat to chat')
    expect(passthrough.json.choices[0].message.content).toBe('the key is [redacted]')

    next = { pieces: [geminiAnswer(`the key is ${spelling}`)] }
    const toGemini = await chat('gemini-2.5-flash')
    expect(toGemini.status).toBe(200)
    expectNoKey(toGemini.text, 'chat to Gemini')
    expect(toGemini.json.choices[0].message.content).toBe('the key is [redacted]')

    next = { pieces: [chatAnswer(`the key is ${spelling}`)] }
    const fromGemini = await gemini('gpt-4o-mini')
    expect(fromGemini.status).toBe(200)
    expectNoKey(fromGemini.text, 'Gemini to chat')
    expect(fromGemini.json.candidates[0].content.parts[0].text).toBe('the key is [redacted]')
  })

  it.each(SPELLINGS)('is taken out of error bodies, passed through or translated (%s)', async (spelling) => {
    next = { status: 400, pieces: [`{"error":{"code":400,"message":"bad key ${spelling}","status":"INVALID_ARGUMENT"}}`] }
    const passthrough = await gemini('gemini-2.5-flash')
    expect(passthrough.status).toBe(400)
    expectNoKey(passthrough.text, 'Gemini error')
    const translated = await chat('gemini-2.5-flash')
    expect(translated.status).toBe(400)
    expectNoKey(translated.text, 'Gemini error to chat')
  })

  it.each(SPELLINGS)('is taken out of streams, split inside its escapes (%s)', async (spelling) => {
    const event = chatChunk(`the key is ${spelling}`)
    const at = event.indexOf(spelling)
    for (const cut of [at + 1, at + 3, at + 7, at + spelling.length - 2]) {
      next = { sse: true, pieces: [event.slice(0, cut), event.slice(cut), CHAT_END] }
      const passthrough = await chat('gpt-4o-mini', { stream: true })
      expectNoKey(passthrough.text, `chat stream cut at ${cut}`)
      const translated = await gemini('gpt-4o-mini', true)
      expectNoKey(translated.text, `Gemini stream cut at ${cut}`)
    }
  })

  it('is taken out of the record of an answer whose client left', async () => {
    next = { pieces: [chatAnswer(`kept ${SPELLINGS[1]}`)], delayMs: 200 }
    await sendThenAbort(`${url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('keep')),
      afterMs: 30,
    })
    const list = await eventually(async () => {
      const l = (await call(`${url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
      return l.count === 1 ? l : undefined
    })
    const record = (await call(`${url}/v1/recoveries/${list.items[0].request_id}`, { headers: bearer(KEY_A) })).json
    const text = JSON.stringify(record)
    expect(text).not.toContain(KEY)
    expect(text).not.toContain('0123456789')
    for (const inner of strings(record)) expect(inner).not.toContain(KEY)
    expectNoKey(record.response.body_raw, 'record body')
  })
})
