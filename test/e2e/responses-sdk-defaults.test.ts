import { ChatOpenAI } from '@langchain/openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { VERCEL_AI_SDKS } from '../support/sdks.js'
import { NODE_KINDS } from '../support/servers.js'

// The SDKs whose default OpenAI model calls the Responses API, unchanged: the Vercel `ai` SDK's `openai(model)` and
// LangChain's `ChatOpenAI({ useResponsesApi: true })`, on a model of each upstream format.
const MODELS = [
  ['an OpenAI-upstream model (passthrough)', 'gpt-4o-mini', '/v1/responses'],
  ['a Gemini-upstream model (translated)', 'gemini-2.5-flash', '/v1beta/models/gemini-2.5-flash:generateContent'],
] as const
const streamPath = (path: string) => (path === '/v1/responses' ? path : path.replace(':generateContent', ':streamGenerateContent?alt=sse'))

let fx: Fixture
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!)
})
afterAll(() => fx.close())

/** The paths of the upstream requests whose body carries `marker`. */
const upstreamPaths = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker)).map((r) => r.path)

describe.each(VERCEL_AI_SDKS)('%s, the default createOpenAI({ baseURL })(model)', (name, load) => {
  describe.each(MODELS)('on %s', (label, model, path) => {
    it('generateText: the answer’s text and usage, from one call to POST /v1/responses', async () => {
      const { generateText, createOpenAI } = await load()
      const openai = createOpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A })
      const marker = `vercel text ${name} ${label}`
      const result = await generateText({ model: openai(model), prompt: marker, maxRetries: 0 })
      expect(result.text).toBe(`Echo: ${marker}`)
      expect(result.finishReason).toBe('stop')
      expect(result.usage.inputTokens).toBeGreaterThan(0)
      expect(result.usage.outputTokens).toBeGreaterThan(0)
      expect(result.response.modelId).toBe(model)
      expect(upstreamPaths(marker)).toEqual([path])
    })

    it('streamText: the text in deltas, the finish reason and usage from response.completed', async () => {
      const { streamText, createOpenAI } = await load()
      const openai = createOpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A })
      const marker = `vercel stream ${name} ${label}`
      const errors: unknown[] = []
      const result = streamText({ model: openai(model), prompt: marker, maxRetries: 0, onError: ({ error }) => void errors.push(error) })
      const deltas: string[] = []
      for await (const delta of result.textStream) deltas.push(delta)
      expect(deltas.join('')).toBe(`Echo: ${marker}`)
      expect(deltas.length).toBeGreaterThan(1)
      expect(await result.finishReason).toBe('stop')
      expect((await result.usage).outputTokens).toBeGreaterThan(0)
      expect(errors).toEqual([])
      expect(upstreamPaths(marker)).toEqual([streamPath(path)])
    })
  })
})

describe.each(MODELS)('LangChain ChatOpenAI({ useResponsesApi: true }) on %s', (label, model, path) => {
  const chat = () =>
    new ChatOpenAI({ model, apiKey: KEY_A, configuration: { baseURL: `${fx.url}/v1` }, useResponsesApi: true, maxRetries: 0 })

  it('invoke: an AIMessage with the answer’s text and usage', async () => {
    const marker = `langchain invoke ${label}`
    const message = await chat().invoke(marker)
    expect(message.text).toBe(`Echo: ${marker}`)
    expect(message.usage_metadata?.input_tokens).toBeGreaterThan(0)
    expect(message.usage_metadata?.total_tokens).toBe(
      (message.usage_metadata?.input_tokens ?? 0) + (message.usage_metadata?.output_tokens ?? 0),
    )
    expect(upstreamPaths(marker)).toEqual([path])
  })

  it('stream: the answer in chunks that add up to the text', async () => {
    const marker = `langchain stream ${label}`
    let text = ''
    let chunks = 0
    for await (const chunk of await chat().stream(marker)) {
      text += chunk.text
      chunks++
    }
    expect(text).toBe(`Echo: ${marker}`)
    expect(chunks).toBeGreaterThan(1)
    expect(upstreamPaths(marker)).toEqual([streamPath(path)])
  })
})
