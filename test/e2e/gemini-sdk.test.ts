import { beforeAll, describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { eventually } from '../support/http.js'
import { ON_NODE_22 } from '../support/sdks.js'
import { describeMatrix, describeOnce, type ServerKind } from '../support/servers.js'

/** The part of a GenerateContentResponse these scenarios read; both SDK majors have it. */
interface SdkResponse {
  readonly text?: string | undefined
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number }
  modelVersion?: string
}

/** The part of the SDK client these scenarios use, so 2.x and 3.x run the same code. */
interface GenAIClient {
  models: {
    generateContent(params: { model: string; contents: string }): Promise<SdkResponse>
    generateContentStream(params: { model: string; contents: string }): Promise<AsyncIterable<SdkResponse>>
  }
}

type GenAIConstructor = new (options: { apiKey: string; httpOptions: { baseUrl: string; apiVersion?: string } }) => GenAIClient

/** A fixture for SDK scenarios, with the usage it reports and a client of the SDK copy `load` brings. */
function useSdk(load: () => Promise<GenAIConstructor>, kind: ServerKind) {
  const usage: UsageEvent[] = []
  const fx = useFixture(kind, { onUsage: (u) => usage.push(u) })
  let GoogleGenAI: GenAIConstructor
  beforeAll(async () => {
    GoogleGenAI = await load()
  })
  // Only the base URL, as the README shows it: each SDK major then calls its own default API version.
  const client = (apiKey = KEY_A, apiVersion?: string) =>
    new GoogleGenAI({ apiKey, httpOptions: apiVersion ? { baseUrl: fx.url, apiVersion } : { baseUrl: fx.url } })
  return { fx, usage, client }
}

/** The SDK scenarios for one SDK copy, run through one server kind. */
function sdkScenarios(load: () => Promise<GenAIConstructor>) {
  return (kind: ServerKind) => {
    const { fx, usage, client } = useSdk(load, kind)

    /** The one upstream request a scenario made: the gateway's key, never the client's. */
    const onlyUpstreamRequest = () => {
      expect(fx.mock.requests).toHaveLength(1)
      const upstream = fx.mock.requests[0]!
      expect(upstream.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
      expect(upstream.headers.authorization).toBeUndefined()
      expect(JSON.stringify(upstream)).not.toContain(KEY_A)
      return upstream
    }

    it('generateContent gets the model’s answer and usage through the gateway', async () => {
      fx.mock.resetRequests()
      const response = await client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello from the SDK' })
      expect(response.text).toBe('Echo: Hello from the SDK')
      expect(response.modelVersion).toBe('gemini-2.5-flash')
      expect(response.usageMetadata?.promptTokenCount).toBeGreaterThan(0)
      const upstream = onlyUpstreamRequest()
      expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
      expect(JSON.parse(upstream.body).contents).toEqual([{ role: 'user', parts: [{ text: 'Hello from the SDK' }] }])
      const event = await eventually(() =>
        usage.find((u) => u.endpoint === 'generateContent' && u.input_tokens === response.usageMetadata?.promptTokenCount),
      )
      expect(event?.output_tokens).toBe(response.usageMetadata?.candidatesTokenCount)
    })

    it('accepts the model name in the SDK’s `models/…` form', async () => {
      fx.mock.resetRequests()
      const response = await client().models.generateContent({ model: 'models/gemini-2.5-flash', contents: 'prefixed' })
      expect(response.text).toBe('Echo: prefixed')
      expect(onlyUpstreamRequest().path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    })

    it.each(['v1beta', 'v1'])('serves the API version %s when the client names it', async (apiVersion) => {
      fx.mock.resetRequests()
      const response = await client(KEY_A, apiVersion).models.generateContent({ model: 'gemini-2.5-flash', contents: apiVersion })
      expect(response.text).toBe(`Echo: ${apiVersion}`)
      expect(onlyUpstreamRequest().path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    })

    it('generateContentStream yields the answer chunk by chunk', async () => {
      fx.mock.resetRequests()
      const stream = await client().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Stream to the SDK' })
      const chunks: SdkResponse[] = []
      for await (const chunk of stream) chunks.push(chunk)
      expect(chunks.length).toBeGreaterThan(1)
      expect(chunks.map((c) => c.text ?? '').join('')).toBe('Echo: Stream to the SDK')
      expect(chunks.at(-1)?.usageMetadata?.totalTokenCount).toBeGreaterThan(0)
      expect(onlyUpstreamRequest().path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')
    })
  }
}

/** The SDK scenarios whose answers come from the gateway before any server kind matters. */
function sdkErrorScenarios(load: () => Promise<GenAIConstructor>) {
  return (kind: ServerKind) => {
    const { fx, client } = useSdk(load, kind)

    it('surfaces the gateway’s 401 and 404 as the SDK’s API errors, without calling the upstream', async () => {
      fx.mock.resetRequests()
      await expect(client('sk-wrong').models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' })).rejects.toMatchObject({
        status: 401,
        message: expect.stringContaining('UNAUTHENTICATED'),
      })
      await expect(client().models.generateContent({ model: 'gemini-unknown', contents: 'x' })).rejects.toMatchObject({
        status: 404,
        message: expect.stringContaining('NOT_FOUND'),
      })
      await expect(client().models.generateContentStream({ model: 'gpt-unknown', contents: 'x' })).rejects.toMatchObject({ status: 404 })
      expect(fx.mock.requests).toHaveLength(0)
    })
  }
}

const v2 = async () => (await import('@google/genai')).GoogleGenAI
describeMatrix('Google GenAI SDK 2.x', sdkScenarios(v2))
describeOnce('Google GenAI SDK 2.x', sdkErrorScenarios(v2))

// @google/genai 3.x requires Node >= 22: it runs only there, which is the Node 24 leg of CI (the Node 20 leg
// runs the 2.x scenarios above and skips these).
describe.runIf(ON_NODE_22)('Google GenAI SDK 3.x', () => {
  const v3 = async () => (await import('google-genai-v3')).GoogleGenAI
  describeMatrix('Google GenAI SDK 3.x', sdkScenarios(v3))
  describeOnce('Google GenAI SDK 3.x', sdkErrorScenarios(v3))
})
