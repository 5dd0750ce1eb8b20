// A Messages stream assembled into the message a whole call gives: the message `message_start` opens, its content
// blocks as their deltas build them, and what `message_delta` says last. Read from the events themselves rather than
// through the hub, so a kept stream's record carries every member the upstream sent (usage details, service tier).
import { isObject } from '../../../json/value.js'
import { forEachInSlices } from '../../../translate/assemble.js'
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

/** The message of a Messages stream so far, one event's `data` at a time. */
class MessageDraft {
  #message: JsonObject | undefined
  readonly #blocks: JsonObject[] = []
  readonly #toolInput = new Map<JsonObject, string>()

  add(text: string): void {
    const event = parseJson(text)
    if (!isObject(event)) return
    const index = typeof event.index === 'number' && Number.isSafeInteger(event.index) && event.index >= 0 ? event.index : undefined
    const blocks = this.#blocks
    switch (event.type) {
      case 'message_start':
        if (isObject(event.message)) this.#message = { ...event.message }
        break
      case 'content_block_start':
        if (index !== undefined && isObject(event.content_block)) blocks[index] = { ...event.content_block }
        break
      case 'content_block_delta': {
        const block = index === undefined ? undefined : blocks[index]
        if (block && isObject(event.delta)) applyDelta(block, event.delta, this.#toolInput)
        break
      }
      case 'content_block_stop': {
        const block = index === undefined ? undefined : blocks[index]
        const json = block && this.#toolInput.get(block)
        if (block && json !== undefined) block.input = json === '' ? {} : (parseJson(json) ?? block.input)
        break
      }
      case 'message_delta': {
        const message = this.#message
        if (!message) break
        if (isObject(event.delta)) Object.assign(message, event.delta)
        // Its counts are cumulative, and may repeat the input ones: they replace what `message_start` said.
        if (isObject(event.usage)) message.usage = { ...(isObject(message.usage) ? message.usage : {}), ...event.usage }
        break
      }
    }
  }

  /** The message, or undefined before a `message_start`. */
  message(): object | undefined {
    const message = this.#message
    if (!message) return undefined
    message.content = this.#blocks.filter((block) => block !== undefined)
    return message
  }
}

/**
 * The message a Messages stream (its events' SSE `data`) adds up to; undefined for a stream cut before its
 * `message_start`. A stream cut later gives the message so far.
 */
export function assembleMessage(data: readonly string[]): object | undefined {
  const draft = new MessageDraft()
  for (const text of data) draft.add(text)
  return draft.message()
}

/** `assembleMessage` with a turn of the event loop after each slice of event data: a kept stream can be large. */
export async function assembleMessageInSlices(data: readonly string[]): Promise<object | undefined> {
  const draft = new MessageDraft()
  await forEachInSlices(data, (text) => draft.add(text))
  return draft.message()
}
