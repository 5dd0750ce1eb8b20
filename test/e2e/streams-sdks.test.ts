import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createOpenAI } from '@ai-sdk/openai'
import { streamText } from 'ai'
import { describe, expect, it } from 'vitest'
import { KEY_A, useFixture } from '../support/fixture.js'
import { MODEL } from '../support/gemini.js'
import { ON_NODE_22, OPENAI_SDKS } from '../support/sdks.js'
import { NODE_KINDS } from '../support/servers.js'

const node = NODE_KINDS[0] as (typeof NODE_KINDS)[number]

/** The Google GenAI SDK as these tests use it. */
interface GenAIClient {
  models: {
    generateContentStream(request: { model: string; contents: string }): Promise<AsyncIterable<{ text?: string }>>
  }
}
type GenAIConstructor = new (options: { apiKey: string; httpOptions: { baseUrl: string; headers?: Record<string, string> } }) => GenAIClient

const GENAI_SDKS: Array<[string, () => Promise<GenAIConstructor>]> = [
  ['genai 2', async () => (await import('@google/genai')).GoogleGenAI as unknown as GenAIConstructor],
  ...(ON_NODE_22
    ? [
        ['genai 3', async () => (await import('google-genai-v3')).GoogleGenAI as unknown as GenAIConstructor] as [
          string,
          () => Promise<GenAIConstructor>,
        ],
      ]
    : []),
]

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of stream) out.push(item)
  return out
}

describe('SDKs read numbered (resumable) streams as plain ones, and raise an error when the upstream breaks off', () => {
  // Under 'finish' every stream carries event ids, keyed or not.
  const fx = useFixture(node, { recovery: { streams: 'finish' } })

  for (const [sdk, load] of OPENAI_SDKS) {
    it(`${sdk}: a keyed stream with event ids reads whole`, async () => {
      const OpenAI = await load()
      const client = new OpenAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1`, maxRetries: 0 })
      const stream = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `ids ${sdk}` }], stream: true },
        { headers: { 'Idempotency-Key': `ids-${sdk.replace(' ', '-')}` } },
      )
      const text = (await collect(stream)).map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')
      expect(text).toBe(`Echo: ids ${sdk}`)
    })

    it(`${sdk}: a numbered Responses stream reads whole`, async () => {
      const OpenAI = await load()
      const client = new OpenAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1`, maxRetries: 0 })
      const stream = await client.responses.create({ model: 'gpt-4o-mini', input: `ids responses ${sdk}`, stream: true })
      const events = await collect(stream)
      const text = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('')
      expect(text).toBe(`Echo: ids responses ${sdk}`)
      expect(events.at(-1)?.type).toBe('response.completed')
    })

    it(`${sdk}: an upstream that breaks off mid-stream is a thrown error, not a short answer`, async () => {
      const OpenAI = await load()
      const client = new OpenAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1`, maxRetries: 0 })
      const run = async () => {
        // The mock upstream's steering field rides along in the body.
        const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: `break ${sdk}` }], stream: true as const }
        const stream = await client.chat.completions.create(Object.assign(body, { mock: { chunks: 6, destroy_after_frames: 3 } }))
        return collect(stream)
      }
      await expect(run()).rejects.toThrow(/broke off/)
    })
  }

  for (const [sdk, load] of GENAI_SDKS) {
    it(`${sdk}: a keyed stream with event ids reads whole`, async () => {
      const GoogleGenAI = await load()
      const client = new GoogleGenAI({
        apiKey: KEY_A,
        httpOptions: { baseUrl: fx.url, headers: { 'idempotency-key': `ids-${sdk.replace(' ', '-')}` } },
      })
      const chunks = await collect(await client.models.generateContentStream({ model: MODEL, contents: `ids ${sdk}` }))
      expect(chunks.map((c) => c.text ?? '').join('')).toBe(`Echo: ids ${sdk}`)
    })

    it(`${sdk}: an upstream that breaks off mid-stream is a thrown error`, async () => {
      const GoogleGenAI = await load()
      const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
      const marker = `break ${sdk}`
      fx.mock.steer(marker, { chunks: 6, destroy_after_frames: 3 })
      const run = async () => collect(await client.models.generateContentStream({ model: MODEL, contents: marker }))
      await expect(run()).rejects.toThrow(/broke off/)
    })
  }

  it('Vercel ai streamText reads numbered chat and Google streams whole', async () => {
    const headers = { 'idempotency-key': 'ids-vercel-chat' }
    const openai = createOpenAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1` })
    const chat = streamText({ model: openai.chat('gpt-4o-mini'), prompt: 'ids vercel', headers })
    expect(await chat.text).toBe('Echo: ids vercel')
    const google = createGoogleGenerativeAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1beta` })
    const gem = streamText({ model: google(MODEL), prompt: 'ids vercel google', headers: { 'idempotency-key': 'ids-vercel-google' } })
    expect(await gem.text).toBe('Echo: ids vercel google')
  })
})
