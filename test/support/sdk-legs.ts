// The SDKs the client is tested with, each given a `fetch` and asked one question: what the app reads of the answer.
import { ON_NODE_22, OPENAI_SDKS } from './sdks.js'

/** Where a leg's client is pointed, and with what. */
export interface LegTarget {
  /** The main base URL: where the gateway is mounted (no /v1). */
  base: string
  apiKey: string
  fetch: typeof fetch
  signal?: AbortSignal
}

/** One SDK in one mode: sends `prompt` and resolves with the reply text the app reads. */
export interface SdkLeg {
  name: string
  stream: boolean
  /** The model id the leg asks for. */
  model: string
  ask(target: LegTarget, prompt: string): Promise<string>
}

const CHAT_MODEL = 'gpt-4o-mini'
const GEMINI_MODEL = 'gemini-2.5-flash'

/** The openai SDK's Responses API (`POST /v1/responses`), whole and streamed. */
function responsesLegs(name: string, load: () => Promise<any>): SdkLeg[] {
  const client = async (t: LegTarget) => new (await load())({ baseURL: `${t.base}/v1`, apiKey: t.apiKey, fetch: t.fetch, maxRetries: 0 })
  return [
    {
      name: `${name} responses`,
      stream: false,
      model: CHAT_MODEL,
      async ask(t, prompt) {
        return (await (await client(t)).responses.create({ model: CHAT_MODEL, input: prompt }, { signal: t.signal })).output_text
      },
    },
    {
      name: `${name} responses`,
      stream: true,
      model: CHAT_MODEL,
      async ask(t, prompt) {
        const stream = await (await client(t)).responses.create({ model: CHAT_MODEL, input: prompt, stream: true }, { signal: t.signal })
        let text = ''
        for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta
        return text
      },
    },
  ]
}

function openaiLegs(name: string, load: () => Promise<any>): SdkLeg[] {
  const client = async (t: LegTarget) => new (await load())({ baseURL: `${t.base}/v1`, apiKey: t.apiKey, fetch: t.fetch, maxRetries: 0 })
  const messages = (prompt: string) => [{ role: 'user', content: prompt }]
  return [
    {
      name,
      stream: false,
      model: CHAT_MODEL,
      async ask(t, prompt) {
        const answer = await (await client(t)).chat.completions.create(
          { model: CHAT_MODEL, messages: messages(prompt) },
          { signal: t.signal },
        )
        return answer.choices[0].message.content
      },
    },
    {
      name,
      stream: true,
      model: CHAT_MODEL,
      async ask(t, prompt) {
        const stream = await (await client(t)).chat.completions.create(
          { model: CHAT_MODEL, messages: messages(prompt), stream: true },
          { signal: t.signal },
        )
        let text = ''
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
        return text
      },
    },
  ]
}

function genaiLegs(name: string, load: () => Promise<any>): SdkLeg[] {
  const client = async (t: LegTarget) => new (await load())({ apiKey: t.apiKey, httpOptions: { baseUrl: t.base, fetch: t.fetch } })
  return [
    {
      name,
      stream: false,
      model: GEMINI_MODEL,
      async ask(t, prompt) {
        const answer = await (await client(t)).models.generateContent({
          model: GEMINI_MODEL,
          contents: prompt,
          config: { abortSignal: t.signal },
        })
        return answer.text ?? ''
      },
    },
    {
      name,
      stream: true,
      model: GEMINI_MODEL,
      async ask(t, prompt) {
        const stream = await (await client(t)).models.generateContentStream({
          model: GEMINI_MODEL,
          contents: prompt,
          config: { abortSignal: t.signal },
        })
        let text = ''
        for await (const chunk of stream) text += chunk.text ?? ''
        return text
      },
    },
  ]
}

function vercelLegs(name: string, loadAi: () => Promise<any>, loadProvider: () => Promise<any>): SdkLeg[] {
  const model = async (t: LegTarget) =>
    (await loadProvider()).createOpenAI({ baseURL: `${t.base}/v1`, apiKey: t.apiKey, fetch: t.fetch }).chat(CHAT_MODEL)
  return [
    {
      name,
      stream: false,
      model: CHAT_MODEL,
      async ask(t, prompt) {
        const { generateText } = await loadAi()
        return (await generateText({ model: await model(t), prompt, maxRetries: 0, abortSignal: t.signal })).text
      },
    },
    {
      name,
      stream: true,
      model: CHAT_MODEL,
      async ask(t, prompt) {
        const { streamText } = await loadAi()
        let failure: unknown
        const result = streamText({
          model: await model(t),
          prompt,
          maxRetries: 0,
          abortSignal: t.signal,
          onError: ({ error }: { error: unknown }) => {
            failure = error
          },
        })
        let text = ''
        for await (const delta of result.textStream) text += delta
        if (failure !== undefined) throw failure
        return text
      },
    },
  ]
}

/**
 * Every SDK leg this Node runs: openai (chat completions, and the Responses API on its newest copy) and Vercel ai +
 * @ai-sdk/openai everywhere, @google/genai 3.x and the newest majors on Node ≥ 22.
 */
export function sdkLegs(): SdkLeg[] {
  const [newest] = OPENAI_SDKS.slice(-1)
  return [
    ...OPENAI_SDKS.flatMap(([name, load]) => openaiLegs(name, load)),
    ...(newest ? responsesLegs(...newest) : []),
    ...vercelLegs(
      'ai 6 + @ai-sdk/openai 3',
      () => import('ai'),
      () => import('@ai-sdk/openai'),
    ),
    ...(ON_NODE_22
      ? [
          ...genaiLegs('@google/genai 3', async () => (await import('google-genai-v3')).GoogleGenAI),
          ...vercelLegs(
            'ai 7 + @ai-sdk/openai 4',
            () => import('ai-v7'),
            () => import('ai-sdk-openai-v4'),
          ),
        ]
      : []),
  ]
}
