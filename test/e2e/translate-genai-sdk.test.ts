import { describe, expect, it } from 'vitest'
import { KEY_A, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { ON_NODE_22 } from '../support/sdks.js'
import { describeOnce, type ServerKind } from '../support/servers.js'

// The Google GenAI SDK, unchanged, calling the fixture's OpenAI-upstream model: every request and answer is translated.
const MODEL = 'gpt-4o-mini'

/** A part of a Gemini content, as both SDK majors type it (loosely: only what these scenarios read). */
interface SdkPart {
  text?: string
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> }
}

/** The part of a GenerateContentResponse these scenarios read; both SDK majors have it. */
interface SdkResponse {
  readonly text?: string | undefined
  readonly functionCalls?: SdkPart['functionCall'][] | undefined
  candidates?: Array<{ content?: { role?: string; parts?: SdkPart[] }; finishReason?: string }>
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number }
  modelVersion?: string
}

interface Params {
  model: string
  contents: unknown
  config?: Record<string, unknown>
}

/** The part of the SDK client these scenarios use, so 2.x and 3.x run the same code. */
interface GenAIClient {
  models: {
    generateContent(params: Params): Promise<SdkResponse>
    generateContentStream(params: Params): Promise<AsyncIterable<SdkResponse>>
  }
}

type GenAIConstructor = new (options: { apiKey: string; httpOptions: { baseUrl: string } }) => GenAIClient

const WEATHER = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
    },
  ],
}

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='

function scenarios(sdk: string, load: () => Promise<GenAIConstructor>) {
  return (kind: ServerKind) => {
    const fx = useFixture(kind)
    const client = async () => new (await load())({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })

    /** The upstream requests whose body carries `marker`, bodies parsed: what the gateway sent the chat upstream. */
    const upstream = (marker: string) =>
      fx.mock.requests.filter((r) => r.body.includes(marker)).map((r) => ({ path: r.path, headers: r.headers, body: JSON.parse(r.body) }))

    /** The one upstream request of a scenario: on the chat route, with the gateway's key. */
    function onlyUpstream(marker: string) {
      const [request, ...more] = upstream(marker)
      expect(more).toHaveLength(0)
      expect(request?.path).toBe('/v1/chat/completions')
      expect(request?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
      return request!
    }

    it('generateContent: the echo, usage and the model’s name', async () => {
      const marker = `text ${sdk}`
      const response = await (await client()).models.generateContent({
        model: MODEL,
        contents: marker,
        config: { systemInstruction: 'be brief', temperature: 0.3, maxOutputTokens: 50 },
      })
      expect(response.text).toBe(`Echo: ${marker}`)
      expect(response.modelVersion).toBe(MODEL)
      expect(response.candidates?.[0]?.finishReason).toBe('STOP')
      const u = response.usageMetadata
      expect(u?.promptTokenCount).toBeGreaterThan(0)
      expect(u?.totalTokenCount).toBe((u?.promptTokenCount ?? 0) + (u?.candidatesTokenCount ?? 0))
      expect(onlyUpstream(marker).body).toEqual({
        model: MODEL,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: marker },
        ],
        temperature: 0.3,
        max_completion_tokens: 50,
      })
    })

    it('generateContentStream: the answer chunk by chunk, usage on the last', async () => {
      const marker = `stream ${sdk}`
      const stream = await (await client()).models.generateContentStream({ model: MODEL, contents: marker })
      const chunks: SdkResponse[] = []
      for await (const chunk of stream) chunks.push(chunk)
      expect(chunks.length).toBeGreaterThan(1)
      expect(chunks.map((c) => c.text ?? '').join('')).toBe(`Echo: ${marker}`)
      expect(chunks.at(-1)?.usageMetadata?.totalTokenCount).toBeGreaterThan(0)
      expect(onlyUpstream(marker).body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    })

    it('function calling: the functionCall comes back, its functionResponse gets the final text', async () => {
      const marker = `tools ${sdk}`
      const genai = await client()
      const user = { role: 'user', parts: [{ text: marker }] }
      const first = await genai.models.generateContent({ model: MODEL, contents: [user], config: { tools: [WEATHER] } })
      const [fc] = first.functionCalls ?? []
      expect(fc).toMatchObject({ name: 'get_weather', args: { city: 'text' } })
      const modelTurn = first.candidates?.[0]?.content
      const result = { role: 'user', parts: [{ functionResponse: { id: fc?.id, name: 'get_weather', response: { temperature: '22C' } } }] }
      const final = await genai.models.generateContent({ model: MODEL, contents: [user, modelTurn, result], config: { tools: [WEATHER] } })
      expect(final.text).toBe('Tool said: {"temperature":"22C"}')
      const [a, b, ...more] = upstream(marker)
      expect(more).toHaveLength(0)
      expect(a?.body.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ])
      const callId = b?.body.messages[1].tool_calls[0].id
      expect(callId).toEqual(expect.any(String))
      expect(b?.body.messages).toEqual([
        { role: 'user', content: marker },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"text"}' } }],
        },
        { role: 'tool', tool_call_id: callId, content: '{"temperature":"22C"}' },
      ])
    })

    it('toolConfig mode ANY with one allowed function: the chat upstream is made to call that one', async () => {
      const marker = `forced tool ${sdk}`
      const tools = [{ functionDeclarations: [...WEATHER.functionDeclarations, { name: 'get_time' }] }]
      const toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } }
      const response = await (await client()).models.generateContent({ model: MODEL, contents: marker, config: { tools, toolConfig } })
      expect(response.functionCalls).toEqual([expect.objectContaining({ name: 'get_time', args: {} })])
      expect(onlyUpstream(marker).body.tool_choice).toEqual({ type: 'function', function: { name: 'get_time' } })
    })

    it('generateContentStream with a tool: the streamed call arrives as one whole functionCall', async () => {
      const marker = `streamed tools ${sdk}`
      const stream = await (await client()).models.generateContentStream({ model: MODEL, contents: marker, config: { tools: [WEATHER] } })
      const calls: unknown[] = []
      for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []))
      expect(calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'text' } })])
      expect(onlyUpstream(marker).body).toMatchObject({ stream: true, tools: [{ type: 'function' }] })
    })

    it('an inlineData image reaches the chat upstream as an image_url data: URL', async () => {
      const marker = `image ${sdk}`
      const parts = [{ text: marker }, { inlineData: { mimeType: 'image/png', data: PIXEL } }]
      const response = await (await client()).models.generateContent({ model: MODEL, contents: [{ role: 'user', parts }] })
      expect(response.text).toBe(`Echo: ${marker} (1 image received)`)
      expect(onlyUpstream(marker).body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: marker },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
          ],
        },
      ])
    })

    it('responseSchema: JSON valid against the schema, sent upstream as a json_schema response format', async () => {
      const marker = `json ${sdk}`
      const responseSchema = {
        type: 'OBJECT',
        properties: { name: { type: 'STRING' }, age: { type: 'INTEGER' } },
        required: ['name', 'age'],
      }
      const response = await (await client()).models.generateContent({
        model: MODEL,
        contents: marker,
        config: { responseMimeType: 'application/json', responseSchema },
      })
      expect(JSON.parse(response.text ?? '')).toEqual({ name: 'text', age: 1 })
      expect(onlyUpstream(marker).body.response_format).toEqual({
        type: 'json_schema',
        json_schema: {
          name: 'response',
          schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'] },
        },
      })
    })

    it('topK, which a chat upstream cannot express: dropped, and the answer comes', async () => {
      const marker = `top k ${sdk}`
      const response = await (await client()).models.generateContent({ model: MODEL, contents: marker, config: { topK: 5, topP: 0.5 } })
      expect(response.text).toBe(`Echo: ${marker}`)
      const [sent] = upstream(marker)
      expect(sent?.body).toMatchObject({ top_p: 0.5 })
      expect(sent?.body).not.toHaveProperty('top_k')
    })

    it('an upstream 429 reaches the SDK as an API error with status 429', async () => {
      const marker = `rate limited ${sdk}`
      fx.mock.steer(marker, { status: 429 })
      const request = (await client()).models.generateContent({ model: MODEL, contents: marker })
      await expect(request).rejects.toMatchObject({ status: 429, message: expect.stringContaining('RESOURCE_EXHAUSTED') })
    })
  }
}

const v2 = async () => (await import('@google/genai')).GoogleGenAI as unknown as GenAIConstructor
describeOnce('Google GenAI SDK 2.x against an OpenAI-upstream model', scenarios('genai 2', v2))

// @google/genai 3.x requires Node >= 22: it runs on the Node 24 leg only.
describe.runIf(ON_NODE_22)('Google GenAI SDK 3.x', () => {
  const v3 = async () => (await import('google-genai-v3')).GoogleGenAI as unknown as GenAIConstructor
  describeOnce('Google GenAI SDK 3.x against an OpenAI-upstream model', scenarios('genai 3', v3))
})
