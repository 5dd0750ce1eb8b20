import { describe, expect, it } from 'vitest'
import { EMBEDDING_MODELS } from '../support/embedding-models.js'
import { KEY_A, useFixture } from '../support/fixture.js'
import { ON_NODE_22 } from '../support/sdks.js'
import { describeOnce } from '../support/servers.js'

// One scenario per line of the README's "Which base URL for which SDK" table: each SDK unchanged, given the base URL
// that line says, against a real gateway and the strict mock upstreams.

/** The parts of the Vercel `ai` package these scenarios use; 6.x and 7.x alike. */
interface VercelAi {
  generateText(options: {
    model: unknown
    prompt: string
  }): Promise<{ text: string; usage: { inputTokens?: number; outputTokens?: number } }>
  streamText(options: { model: unknown; prompt: string }): {
    textStream: AsyncIterable<string>
    usage: PromiseLike<{ inputTokens?: number }>
  }
  embed(options: { model: unknown; value: string }): Promise<{ embedding: number[]; usage: { tokens: number } }>
  embedMany(options: { model: unknown; values: string[] }): Promise<{ embeddings: number[][] }>
}
/** A provider made by `createOpenAI` or `createGoogleGenerativeAI`, as these scenarios call it. */
interface VercelProvider {
  (model: string): unknown
  chat(model: string): unknown
  embedding(model: string): unknown
}
interface VercelSdk {
  label: string
  ai: () => Promise<VercelAi>
  createOpenAI: () => Promise<(options: { baseURL: string; apiKey: string }) => VercelProvider>
  createGoogle: () => Promise<(options: { baseURL: string; apiKey: string }) => VercelProvider>
}

const VERCEL_6: VercelSdk = {
  label: 'ai 6 with @ai-sdk/openai 3 and @ai-sdk/google 3',
  ai: async () => (await import('ai')) as unknown as VercelAi,
  createOpenAI: async () => (await import('@ai-sdk/openai')).createOpenAI as never,
  createGoogle: async () => (await import('@ai-sdk/google')).createGoogleGenerativeAI as never,
}
// The newest majors need Node >= 22.
const VERCEL_7: VercelSdk = {
  label: 'ai 7 with @ai-sdk/openai 4 and @ai-sdk/google 4',
  ai: async () => (await import('ai-v7')) as unknown as VercelAi,
  createOpenAI: async () => (await import('ai-sdk-openai-v4')).createOpenAI as never,
  createGoogle: async () => (await import('ai-sdk-google-v4')).createGoogleGenerativeAI as never,
}

const collect = async (chunks: AsyncIterable<string>) => {
  let text = ''
  for await (const chunk of chunks) text += chunk
  return text
}

describeOnce('Which base URL for which SDK', (kind) => {
  const fx = useFixture(kind, { models: EMBEDDING_MODELS })
  /** The paths of the upstream requests whose body carries `marker`: proof of which route each call took. */
  const upstreamPaths = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker)).map((r) => r.path)

  it('openai: new OpenAI({ baseURL: `<mount>/v1` }) for chat completions and embeddings', async () => {
    const OpenAI = (await import('openai')).default
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1` })
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'openai line' }] })
    expect(completion.choices[0]?.message.content).toBe('Echo: openai line')
    const { data } = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'openai line embedded' })
    expect(data[0]?.embedding).toHaveLength(8)
    expect(upstreamPaths('openai line')).toEqual(['/v1/chat/completions', '/v1/embeddings'])
  })

  function vercel(sdk: VercelSdk) {
    const openai = async () => (await sdk.createOpenAI())({ baseURL: `${fx.url}/v1`, apiKey: KEY_A })
    const google = async () => (await sdk.createGoogle())({ baseURL: `${fx.url}/v1beta`, apiKey: KEY_A })

    it('@ai-sdk/openai: createOpenAI({ baseURL: `<mount>/v1` }).chat(model) with generateText and streamText', async () => {
      const { generateText, streamText } = await sdk.ai()
      const model = (await openai()).chat('gpt-4o-mini')
      const marker = `${sdk.label} openai chat`
      const generated = await generateText({ model, prompt: marker })
      expect(generated.text).toBe(`Echo: ${marker}`)
      expect(generated.usage.inputTokens).toBeGreaterThan(0)
      const streamed = streamText({ model, prompt: `${marker} streamed` })
      expect(await collect(streamed.textStream)).toBe(`Echo: ${marker} streamed`)
      expect((await streamed.usage).inputTokens).toBeGreaterThan(0)
      expect(upstreamPaths(marker)).toEqual(['/v1/chat/completions', '/v1/chat/completions'])
    })

    it('@ai-sdk/openai .chat and @ai-sdk/google on a model of the other format: translated, whole and streamed', async () => {
      const { generateText, streamText } = await sdk.ai()
      const marker = `${sdk.label} across`
      const onGemini = (await openai()).chat('gemini-2.5-flash')
      expect((await generateText({ model: onGemini, prompt: `${marker} to gemini` })).text).toBe(`Echo: ${marker} to gemini`)
      expect(await collect(streamText({ model: onGemini, prompt: `${marker} to gemini streamed` }).textStream)).toBe(
        `Echo: ${marker} to gemini streamed`,
      )
      const onOpenai = (await google())('gpt-4o-mini')
      expect((await generateText({ model: onOpenai, prompt: `${marker} to openai` })).text).toBe(`Echo: ${marker} to openai`)
      expect(await collect(streamText({ model: onOpenai, prompt: `${marker} to openai streamed` }).textStream)).toBe(
        `Echo: ${marker} to openai streamed`,
      )
      expect(upstreamPaths(marker)).toEqual([
        '/v1beta/models/gemini-2.5-flash:generateContent',
        '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
        '/v1/chat/completions',
        '/v1/chat/completions',
      ])
    })

    it('@ai-sdk/openai: embed and embedMany with openai.embedding(model)', async () => {
      const { embed, embedMany } = await sdk.ai()
      const model = (await openai()).embedding('text-embedding-3-small')
      const marker = `${sdk.label} openai embed`
      const one = await embed({ model, value: marker })
      expect(one.embedding).toHaveLength(8)
      expect(one.usage.tokens).toBeGreaterThan(0)
      const many = await embedMany({ model, values: [`${marker} a`, `${marker} b`] })
      expect(many.embeddings).toHaveLength(2)
      expect(upstreamPaths(marker)).toEqual(['/v1/embeddings', '/v1/embeddings'])
    })

    it('@ai-sdk/google: createGoogleGenerativeAI({ baseURL: `<mount>/v1beta` })(model) with generateText and streamText', async () => {
      const { generateText, streamText } = await sdk.ai()
      const model = (await google())('gemini-2.5-flash')
      const marker = `${sdk.label} google`
      const generated = await generateText({ model, prompt: marker })
      expect(generated.text).toBe(`Echo: ${marker}`)
      expect(generated.usage.inputTokens).toBeGreaterThan(0)
      const streamed = streamText({ model, prompt: `${marker} streamed` })
      expect(await collect(streamed.textStream)).toBe(`Echo: ${marker} streamed`)
      expect(upstreamPaths(marker)).toEqual([
        '/v1beta/models/gemini-2.5-flash:generateContent',
        '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      ])
    })

    it('@ai-sdk/google: embed (:embedContent) and embedMany (:batchEmbedContents) with google.embedding(model)', async () => {
      const { embed, embedMany } = await sdk.ai()
      const model = (await google()).embedding('gemini-embedding-001')
      const marker = `${sdk.label} google embed`
      expect((await embed({ model, value: marker })).embedding).toHaveLength(8)
      expect((await embedMany({ model, values: [`${marker} a`, `${marker} b`] })).embeddings).toHaveLength(2)
      expect(upstreamPaths(marker)).toEqual([
        '/v1beta/models/gemini-embedding-001:embedContent',
        '/v1beta/models/gemini-embedding-001:batchEmbedContents',
      ])
    })
  }

  describe(VERCEL_6.label, () => vercel(VERCEL_6))
  describe.skipIf(!ON_NODE_22)(VERCEL_7.label, () => vercel(VERCEL_7))

  it('@google/genai 2.x: httpOptions: { baseUrl: `<mount>` } (it adds /v1beta)', async () => {
    const { GoogleGenAI } = await import('@google/genai')
    const ai = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'genai 2 line' })
    expect(response.text).toBe('Echo: genai 2 line')
    expect(upstreamPaths('genai 2 line')).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent'])
  })

  it.skipIf(!ON_NODE_22)('@google/genai 3.x: httpOptions: { baseUrl: `<mount>` } (it adds /v1)', async () => {
    const { GoogleGenAI } = await import('google-genai-v3')
    const ai = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'genai 3 line' })
    expect(response.text).toBe('Echo: genai 3 line')
    expect(upstreamPaths('genai 3 line')).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent'])
  })

  it('LangChain ChatOpenAI: configuration: { baseURL: `<mount>/v1` }, invoke and stream (chat completions)', async () => {
    const { ChatOpenAI } = await import('@langchain/openai')
    const llm = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: KEY_A, configuration: { baseURL: `${fx.url}/v1` } })
    const answer = await llm.invoke('langchain line')
    expect(answer.content).toBe('Echo: langchain line')
    let streamed = ''
    for await (const chunk of await llm.stream('langchain line streamed')) streamed += String(chunk.content)
    expect(streamed).toBe('Echo: langchain line streamed')
    expect(upstreamPaths('langchain line')).toEqual(['/v1/chat/completions', '/v1/chat/completions'])
  })

  it('LangChain ChatOpenAI on a model of a Gemini upstream: translated, invoke and stream', async () => {
    const { ChatOpenAI } = await import('@langchain/openai')
    const llm = new ChatOpenAI({ model: 'gemini-2.5-flash', apiKey: KEY_A, configuration: { baseURL: `${fx.url}/v1` } })
    expect((await llm.invoke('langchain across')).content).toBe('Echo: langchain across')
    let streamed = ''
    for await (const chunk of await llm.stream('langchain across streamed')) streamed += String(chunk.content)
    expect(streamed).toBe('Echo: langchain across streamed')
    expect(upstreamPaths('langchain across')).toEqual([
      '/v1beta/models/gemini-2.5-flash:generateContent',
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    ])
  })
})
