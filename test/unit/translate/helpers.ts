import { expect } from 'vitest'
import { gemini, openai, translatorFor } from '../../../src/dialects/index.js'
import { sseEvent } from '../../../src/sse/write.js'
import type { CallInfo, CallPlan, Translated, Translator } from '../../../src/translate/index.js'

/** An OpenAI client calling a Gemini upstream. */
export const chatToGemini = translatorFor(openai, gemini, 'chat.completions')!
/** A Gemini client calling an OpenAI-compatible upstream. */
export const geminiToChat = translatorFor(gemini, openai, 'generateContent')!
/** An OpenAI Responses client calling a Gemini upstream. */
export const responsesToGemini = translatorFor(openai, gemini, 'responses')!

/** A chat function tool, as OpenAI documents it. */
export const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_current_weather',
    description: 'Get the current weather in a given location',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['location'],
    },
  },
}

/** A call with fixed ids and clock, so every output is the same on every run. */
export function callInfo(stream = false): CallInfo {
  return { model: 'client-model', upstreamModel: 'upstream-model', stream, requestId: 'req1', created: 1_700_000_000 }
}

/** The field a request is refused for under `translation.strict`. */
export function strictlyRefusedField(translator: Translator, fields: Record<string, unknown>): string {
  const result = translator.request(fields, { ...callInfo(), strict: true })
  if (result.ok) expect.fail('expected a refusal')
  return result.field
}

/** The value of a translation that must succeed. */
export function ok<T>(result: Translated<T>): T {
  if (!result.ok) expect.fail(`expected success, got a refusal of '${result.field}': ${result.message}`)
  return result.value
}

/** The upstream body of a request that must translate. */
export function upstreamBody(translator: Translator, fields: Record<string, unknown>, stream = false): unknown {
  return ok(translator.request(fields, callInfo(stream))).body
}

/** The plan of a request that must translate. */
export function planOf(translator: Translator, fields: Record<string, unknown>, stream = false): CallPlan {
  return ok(translator.request(fields, callInfo(stream))).plan
}

/** The refused field of a request that must not translate. */
export function refusedField(translator: Translator, fields: Record<string, unknown>): string {
  const result = translator.request(fields, callInfo())
  if (result.ok) expect.fail('expected a refusal')
  return result.field
}

/** The `data` payloads of SSE text, parsed where they are JSON. */
export function frames(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => {
      const data = block.slice(6)
      return data === '[DONE]' ? data : JSON.parse(data)
    })
}

/** The events of a typed SSE stream (Responses): each `event:` name with its `data` parsed. */
export function typedFrames(sse: string): Array<{ event: string | undefined; data: Record<string, unknown> }> {
  return sse
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = block.slice(block.indexOf('data: ') + 6)
      return { event, data: JSON.parse(data) as Record<string, unknown> }
    })
}

/** The plan of a chat client's call for a Gemini upstream, and of a Gemini client's for an OpenAI-compatible one. */
export const chatPlan = planOf(chatToGemini, { model: 'm', messages: [{ role: 'user', content: 'x' }] })
export const geminiPlan = planOf(geminiToChat, { contents: [{ parts: [{ text: 'x' }] }] })
/** A Gemini upstream's answer as an OpenAI client gets it. */
export const forChat = (body: unknown) => ok(chatToGemini.response(body, chatPlan))
/** An OpenAI upstream's answer as a Gemini client gets it. */
export const forGemini = (body: unknown) => ok(geminiToChat.response(body, geminiPlan))

/** A streaming chat request, asking for the usage in its stream or not. */
export const chatRequest = (includeUsage: boolean) => ({
  model: 'm',
  messages: [{ role: 'user', content: 'x' }],
  stream: true,
  ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
})

/** Runs upstream events through a translator, each event written as its own chunk; returns every client frame. */
export function run(translator: Translator, fields: Record<string, unknown>, events: unknown[]): unknown[] {
  const stream = translator.stream(planOf(translator, fields, true))
  let out = ''
  for (const event of events) out += stream.write(sseEvent(typeof event === 'string' ? event : JSON.stringify(event)))
  return frames(out + stream.end())
}

/** What names the model and the answer in every Gemini event of these samples. */
export const GEMINI_META = { modelVersion: 'gemini-2.5-flash', responseId: 'r1' }
/** A Gemini text stream: its events, each with the running usage. */
export const GEMINI_TEXT = [
  {
    candidates: [{ content: { parts: [{ text: 'The' }], role: 'model' }, index: 0 }],
    usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    ...GEMINI_META,
  },
  {
    candidates: [{ content: { parts: [{ text: ' sky is blue.' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 16 },
    ...GEMINI_META,
  },
]

/** A chat chunk as a chat client gets it from a Gemini upstream. */
export const chatFrame = (choices: unknown[], extra: object = {}) => ({
  id: 'chatcmpl-r1',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gemini-2.5-flash',
  choices,
  ...extra,
})

/** A generate-content request. */
export const geminiRequest = { contents: [{ parts: [{ text: 'x' }] }] }
