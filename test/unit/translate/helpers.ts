import { expect } from 'vitest'
import { gemini, openai, translatorFor } from '../../../src/dialects/index.js'
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
