// A Messages stream assembled into the message a whole call gives: the message `message_start` opens, its content
// blocks as their deltas build them, and what `message_delta` says last. Read from the events themselves rather than
// through the hub, so a kept stream's record carries every member the upstream sent (usage details, service tier).
import { isObject } from '../../../json/value.js'
import { type JsonObject, parseJson } from '../../../translate/readers.js'

/** Applies one `content_block_delta`'s delta to its block; tool input arrives as JSON text, parsed at the block's stop. */
function applyDelta(block: JsonObject, delta: JsonObject, toolInput: Map<JsonObject, string>): void {
  switch (delta.type) {
    case 'text_delta':
      block.text = `${typeof block.text === 'string' ? block.text : ''}${typeof delta.text === 'string' ? delta.text : ''}`
      return
    case 'thinking_delta':
      block.thinking = `${typeof block.thinking === 'string' ? block.thinking : ''}${typeof delta.thinking === 'string' ? delta.thinking : ''}`
      return
    // A signature comes whole, in one delta.
    case 'signature_delta':
      block.signature = delta.signature
      return
    case 'input_json_delta':
      toolInput.set(block, `${toolInput.get(block) ?? ''}${typeof delta.partial_json === 'string' ? delta.partial_json : ''}`)
      return
    case 'citations_delta':
      block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation]
      return
  }
}

/**
 * The message a Messages stream (its events' SSE `data`) adds up to; undefined for a stream cut before its
 * `message_start`. A stream cut later gives the message so far.
 */
export function assembleMessage(data: readonly string[]): object | undefined {
  let message: JsonObject | undefined
  const blocks: JsonObject[] = []
  const toolInput = new Map<JsonObject, string>()
  for (const text of data) {
    const event = parseJson(text)
    if (!isObject(event)) continue
    const index = typeof event.index === 'number' && Number.isSafeInteger(event.index) && event.index >= 0 ? event.index : undefined
    switch (event.type) {
      case 'message_start':
        if (isObject(event.message)) message = { ...event.message }
        break
      case 'content_block_start':
        if (index !== undefined && isObject(event.content_block)) blocks[index] = { ...event.content_block }
        break
      case 'content_block_delta': {
        const block = index === undefined ? undefined : blocks[index]
        if (block && isObject(event.delta)) applyDelta(block, event.delta, toolInput)
        break
      }
      case 'content_block_stop': {
        const block = index === undefined ? undefined : blocks[index]
        const json = block && toolInput.get(block)
        if (block && json !== undefined) block.input = json === '' ? {} : (parseJson(json) ?? block.input)
        break
      }
      case 'message_delta':
        if (!message) break
        if (isObject(event.delta)) Object.assign(message, event.delta)
        // Its counts are cumulative, and may repeat the input ones: they replace what `message_start` said.
        if (isObject(event.usage)) message.usage = { ...(isObject(message.usage) ? message.usage : {}), ...event.usage }
        break
    }
  }
  if (!message) return undefined
  message.content = blocks.filter((block) => block !== undefined)
  return message
}
