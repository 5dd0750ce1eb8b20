import http from 'node:http'
import { type Content, GoogleGenAI, type Part } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { SUMMARY } from '../../src/testing/responses.js'
import type { Gateway } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { listen, type MountedServer } from '../support/http.js'

// A Gemini client that asks for thoughts (`thinkingConfig.includeThoughts`, as Gemini CLI always does) on a model of
// another format sees the model's reasoning as `thought: true` parts, whole and streamed, and can send them back in
// its history: they are left out, and the reasoning itself goes back to the model through the thought signature.

/** The mock Anthropic model's thinking text (src/testing/anthropic-messages.ts). */
const THINKING = 'The user wants an answer; the mock upstream gives its usual one.'

let mock: MockUpstream
let gateway: Gateway
let server: MountedServer
let client: GoogleGenAI

beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  gateway = createGateway({
    upstreams: {
      responses: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY, api: 'responses' },
      anthropic: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt-5-codex', upstream: 'responses' },
      { id: 'claude-sonnet-4-5', upstream: 'anthropic' },
    ],
    auth: { apiKeys: [KEY_A] },
  })
  server = await listen(http.createServer(nodeHandler(gateway)))
  client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: server.url } })
})
afterAll(async () => {
  await server?.close()
  await gateway?.close()
  await mock?.close()
})

/** The body the mock was sent for the last call whose prompt holds `marker`. */
function sent(marker: string): Record<string, any> {
  const request = mock.requests.filter((r) => r.method === 'POST' && r.body.includes(marker)).at(-1)
  expect(request, `no upstream call carried ${marker}`).toBeDefined()
  return JSON.parse(request?.body ?? '{}')
}

const thoughts = (parts: readonly Part[]) => parts.filter((part) => part.thought === true).map((part) => part.text ?? '')
const answer = (parts: readonly Part[]) => parts.filter((part) => part.thought !== true).map((part) => part.text ?? '')

const MODELS = [
  { model: 'claude-sonnet-4-5', upstream: 'Anthropic with thinking', thought: THINKING },
  { model: 'gpt-5-codex', upstream: 'the Responses API with a reasoning summary', thought: SUMMARY },
] as const

describe.each(MODELS)('a Gemini client asking for thoughts on $model ($upstream)', ({ model, thought }) => {
  const config = { thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } }

  it('gets the reasoning as thought parts before the answer, whole', async () => {
    const marker = `thoughts whole ${model}`
    const res = await client.models.generateContent({ model, contents: marker, config })
    const parts = res.candidates?.[0]?.content?.parts ?? []
    expect(thoughts(parts)).toEqual([thought])
    expect(parts[0]?.thought).toBe(true)
    // The SDK's text leaves thoughts out: the answer reads as it would without them.
    expect(res.text).toBe(`Echo: ${marker}`)
    expect(answer(parts).join('')).toBe(`Echo: ${marker}`)
    // The part after the thoughts carries them back (see carry.ts), as Gemini's own answers carry a signature.
    expect(parts.find((part) => part.thought !== true)?.thoughtSignature).toEqual(expect.any(String))
  })

  it('gets the reasoning as thought parts as it streams, never mixed into the answer', async () => {
    const marker = `thoughts streamed ${model}`
    const parts: Part[] = []
    for await (const chunk of await client.models.generateContentStream({ model, contents: marker, config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    }
    expect(thoughts(parts).join('')).toBe(thought)
    expect(answer(parts).join('')).toBe(`Echo: ${marker}`)
    const firstAnswer = parts.findIndex((part) => part.thought !== true && part.text !== '')
    expect(parts.slice(firstAnswer).some((part) => part.thought === true)).toBe(false)
  })

  it('sends them back in its history: the thought parts are left out, the reasoning goes back by its signature', async () => {
    const marker = `thoughts history ${model}`
    const first = await client.models.generateContent({ model, contents: marker, config })
    const turn = first.candidates?.[0]?.content as Content
    expect(thoughts(turn.parts ?? [])).toEqual([thought])
    const next = `${marker} again`
    const res = await client.models.generateContent({
      model,
      contents: [{ role: 'user', parts: [{ text: marker }] }, turn, { role: 'user', parts: [{ text: next }] }],
      config,
    })
    expect(res.text).toBe(`Echo: ${next}`)
    const body = sent(next)
    if (model === 'claude-sonnet-4-5') {
      // Once, as the thinking block the model wrote, with its signature: not twice, nor as text.
      const blocks = body.messages[1].content
      expect(blocks.filter((block: { type: string }) => block.type === 'thinking')).toEqual([
        { type: 'thinking', thinking: THINKING, signature: expect.any(String) },
      ])
      expect(JSON.stringify(blocks.filter((block: { type: string }) => block.type !== 'thinking'))).not.toContain(THINKING)
    } else {
      const reasoning = body.input.filter((item: { type?: string }) => item.type === 'reasoning')
      expect(reasoning).toEqual([
        expect.objectContaining({ id: expect.stringMatching(/^rs_mock_/), encrypted_content: expect.any(String) }),
      ])
      expect(JSON.stringify(body.input.filter((item: { type?: string }) => item.type !== 'reasoning'))).not.toContain('Answering as asked')
    }
  })
})

describe('a Gemini client that does not ask for thoughts', () => {
  it.each(MODELS)('gets no thought part from $model, the reasoning only in the signature', async ({ model }) => {
    const marker = `no thoughts ${model}`
    const res = await client.models.generateContent({ model, contents: marker, config: { thinkingConfig: { thinkingBudget: 2048 } } })
    const parts = res.candidates?.[0]?.content?.parts ?? []
    expect(parts.some((part) => part.thought === true)).toBe(false)
    expect(res.text).toBe(`Echo: ${marker}`)
  })

  it('has a thought part in a user turn refused by name', async () => {
    const refused = client.models.generateContent({
      model: 'claude-sonnet-4-5',
      contents: [{ role: 'user', parts: [{ text: 'hmm', thought: true }] }],
    })
    await expect(refused).rejects.toMatchObject({ status: 400, message: expect.stringContaining("'contents[0].parts[0].thought'") })
  })
})
