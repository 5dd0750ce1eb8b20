// Bedrock's Converse (`/model/{id}/converse`, `/converse-stream`) for models other than Claude: the echo of the last
// user text, `Tool said: …` after tool results, a call to the first declared tool when the user spoke last; whole,
// or as ConverseStream's events in an event stream.
import type { ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { damaged, EVENT_STREAM_TYPE, eventFrame } from './bedrock-frames.js'
import { type State, send, stream } from './respond.js'
import { toolArguments, toolReply } from './schema.js'
import { chunkCount, controlledText, JSON_TYPE, type JsonObject, splitText, tokens } from './shared.js'

const textOf = (content: unknown): string =>
  Array.isArray(content) ? content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join('') : ''

/** The prompt's tokens as CountTokens reports them for its Converse form: the text of the system prompt and every message, counted as the Anthropic mock counts a Messages prompt. */
export function converseTokens(body: JsonObject): number {
  const system = Array.isArray(body.system) ? textOf(body.system) : ''
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : []
  return tokens(system.length + messages.reduce((sum, m) => sum + textOf(m.content).length, 0))
}

/** Why Bedrock refuses a Converse body, or undefined. */
export function converseProblem(body: JsonObject): string | undefined {
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'A conversation must start with a user message.'
  for (const key of ['model', 'stream', 'max_tokens']) if (key in body) return `extraneous key [${key}] is not permitted`
  return undefined
}

/** The Converse answer's content blocks and stop reason. */
function answerOf(body: JsonObject, ctl: JsonObject, seq: number): { content: JsonObject[]; stopReason: string } {
  const messages = (body.messages as unknown[]).filter(isObject)
  const last = messages.at(-1)
  const blocks = Array.isArray(last?.content) ? last.content.filter(isObject) : []
  const results = blocks.filter((b) => isObject(b.toolResult))
  const controlled = controlledText(ctl)
  if (controlled !== undefined) return { content: [{ text: controlled }], stopReason: 'end_turn' }
  if (results.length > 0) {
    return { content: [{ text: toolReply(results.map((b) => textOf((b.toolResult as JsonObject).content))) }], stopReason: 'end_turn' }
  }
  const config = isObject(body.toolConfig) ? body.toolConfig : {}
  const tools = Array.isArray(config.tools) ? config.tools.filter((t) => isObject(t) && isObject(t.toolSpec)) : []
  const spec = (tools[0] as JsonObject | undefined)?.toolSpec as JsonObject | undefined
  if (spec !== undefined && last?.role === 'user') {
    const schema = isObject(spec.inputSchema) && isObject(spec.inputSchema.json) ? spec.inputSchema.json : {}
    return {
      content: [{ toolUse: { toolUseId: `tooluse_mock_${seq}`, name: spec.name, input: toolArguments(ctl, schema) } }],
      stopReason: 'tool_use',
    }
  }
  return { content: [{ text: `Echo: ${textOf(last?.content)}` }], stopReason: 'end_turn' }
}

/** Answers a Converse call, whole or streamed. */
export function answerConverse(body: JsonObject, ctl: JsonObject, streamed: boolean, res: ServerResponse, st: State, seq: number): void {
  const { content, stopReason } = answerOf(body, ctl, seq)
  const prompt = tokens(JSON.stringify(body.messages).length)
  const generated = tokens(JSON.stringify(content).length)
  const usage: JsonObject = {
    inputTokens: prompt,
    outputTokens: generated,
    totalTokens: prompt + generated,
    ...(isObject(ctl.usage) ? ctl.usage : {}),
  }
  if (!streamed) {
    send(
      res,
      st,
      200,
      JSON_TYPE,
      JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 1 } }),
    )
    return
  }
  const frames = [eventFrame({ event: 'messageStart' }, { role: 'assistant' })]
  content.forEach((block, index) => {
    if (isObject(block.toolUse)) {
      const { toolUseId, name, input } = block.toolUse
      frames.push(eventFrame({ event: 'contentBlockStart' }, { contentBlockIndex: index, start: { toolUse: { toolUseId, name } } }))
      frames.push(
        eventFrame({ event: 'contentBlockDelta' }, { contentBlockIndex: index, delta: { toolUse: { input: JSON.stringify(input) } } }),
      )
    } else {
      for (const piece of splitText(String(block.text), chunkCount(ctl))) {
        frames.push(eventFrame({ event: 'contentBlockDelta' }, { contentBlockIndex: index, delta: { text: piece } }))
      }
    }
    frames.push(eventFrame({ event: 'contentBlockStop' }, { contentBlockIndex: index }))
  })
  frames.push(eventFrame({ event: 'messageStop' }, { stopReason }))
  frames.push(eventFrame({ event: 'metadata' }, { usage, metrics: { latencyMs: 1 } }))
  stream(res, st, EVENT_STREAM_TYPE, damaged(frames, ctl), ctl)
}
