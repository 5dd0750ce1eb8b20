// The Anthropic clients besides the official SDK that the Messages tests run, each asked one question whole and
// streamed: the Vercel `ai` SDK with @ai-sdk/anthropic (3 with ai 6 everywhere, 4 with ai 7 on Node >= 22, where
// those copies run) and LangChain's ChatAnthropic.
import { ChatAnthropic } from '@langchain/anthropic'
import { ON_NODE_22 } from './sdks.js'

/** The Claude model the Messages tests ask for: one the Anthropic SDK does not warn about as deprecated. */
export const CLAUDE_MODEL = 'claude-haiku-4-5'

/** What an app reads of an answer. */
export interface ClientAnswer {
  text: string
  finishReason?: string
  inputTokens?: number
  outputTokens?: number
}

/** Where a client is pointed: the root where `/v1` lives, and its key. */
export interface ClientTarget {
  base: string
  apiKey: string
}

/** One Vercel `ai` copy with its Anthropic provider. */
export interface VercelAnthropicLeg {
  name: string
  generate(target: ClientTarget, prompt: string): Promise<ClientAnswer>
  stream(target: ClientTarget, prompt: string): Promise<ClientAnswer>
}

function vercelLeg(name: string, loadAi: () => Promise<any>, loadProvider: () => Promise<any>): VercelAnthropicLeg {
  const model = async (t: ClientTarget) =>
    (await loadProvider()).createAnthropic({ baseURL: `${t.base}/v1`, apiKey: t.apiKey })(CLAUDE_MODEL)
  return {
    name,
    async generate(t, prompt) {
      const { generateText } = await loadAi()
      const result = await generateText({ model: await model(t), prompt, maxRetries: 0 })
      return {
        text: result.text,
        finishReason: result.finishReason,
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
      }
    },
    async stream(t, prompt) {
      const { streamText } = await loadAi()
      let failure: unknown
      const result = streamText({
        model: await model(t),
        prompt,
        maxRetries: 0,
        onError: ({ error }: { error: unknown }) => {
          failure = error
        },
      })
      let text = ''
      for await (const delta of result.textStream) text += delta
      if (failure !== undefined) throw failure
      const usage = await result.usage
      return { text, finishReason: await result.finishReason, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }
    },
  }
}

/** Each `ai` + `@ai-sdk/anthropic` pair this Node runs. */
export const VERCEL_ANTHROPIC_LEGS: VercelAnthropicLeg[] = [
  vercelLeg(
    'ai 6 + @ai-sdk/anthropic 3',
    () => import('ai'),
    () => import('@ai-sdk/anthropic'),
  ),
  ...(ON_NODE_22
    ? [
        vercelLeg(
          'ai 7 + @ai-sdk/anthropic 4',
          () => import('ai-v7'),
          () => import('ai-sdk-anthropic-v4'),
        ),
      ]
    : []),
]

/** LangChain's ChatAnthropic on a Messages API at `target`, without retries. */
export const langchainClaude = (t: ClientTarget) =>
  new ChatAnthropic({ model: CLAUDE_MODEL, apiKey: t.apiKey, anthropicApiUrl: t.base, maxRetries: 0 })

/** LangChain's answer text: a string, or the text of its content blocks. */
export function langchainText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((block) => (typeof block?.text === 'string' ? block.text : '')).join('')
}
