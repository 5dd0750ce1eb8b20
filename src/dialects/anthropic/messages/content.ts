// Messages content blocks ⇄ hub parts; a block's `cache_control` ⇄ the hub's cache breakpoint after its part.

import { carried } from '../../../translate/carry.js'
import {
  cachePlaced,
  cacheTtl,
  type HubCachePoint,
  type HubMessage,
  type HubPart,
  type HubRequest,
  imageTypeOfUrl,
  mediaClass,
  toolOutputText,
} from '../../../translate/hub.js'
import { field, hintField, optionalField, payload } from '../../../translate/payload.js'
import {
  absent,
  array,
  at,
  boolean,
  inexpressible,
  type JsonObject,
  object,
  onlyKnown,
  refuse,
  string,
  unchecked,
} from '../../../translate/readers.js'
import {
  type MessagesBlockParam,
  type MessagesCacheControl,
  type MessagesMessageParam,
  type MessagesSource,
  messagesTextBlock,
} from './wire.js'

const SOURCE = payload({ type: field(string), media_type: optionalField(string), data: optionalField(string), url: optionalField(string) })
const IMAGE = payload({ type: field(string), source: field(object), cache_control: hintField() })
/** A document: `title` is what the hub calls a file's name; its `context` and citations change what the model says. */
const DOCUMENT = payload({ type: field(string), source: field(object), title: optionalField(string), cache_control: hintField() })
/** A tool call sent back: `caller` is who made it, as the answer said (the gateway's own answers say `direct`). */
const TOOL_USE = payload({
  type: field(string),
  id: field(string),
  name: field(string),
  input: field(object),
  caller: optionalField(object),
  cache_control: hintField(),
})
const TOOL_RESULT = payload({
  type: field(string),
  tool_use_id: field(string),
  content: optionalField(unchecked),
  is_error: optionalField(boolean),
  cache_control: hintField(),
})
const THINKING = payload({ type: field(string), thinking: field(string), signature: field(string) })
const REDACTED_THINKING = payload({ type: field(string), data: field(string) })

/** What reading a conversation needs besides the block at hand. */
export interface ReadState {
  /** Hint fields left out, by path. */
  dropped: string[]
  /** A `tool_result` names only its call's id; the function's name comes from the `tool_use` that made it. */
  callNames: Map<string, string>
  /** The signature a packed thinking block carried for the tool call after it (see `carry.ts`). */
  signature: string | undefined
  /** Cache breakpoints after a system entry or a tool, by index. */
  cache: NonNullable<HubRequest['cache']>
}

/** The text of a text block, its hints dropped. */
export function textBlock(block: JsonObject, path: string, state: ReadState): string {
  onlyKnown(block, messagesTextBlock.known, path)
  state.dropped.push(...messagesTextBlock.hinted(block, path))
  return messagesTextBlock.read(block, 'text', path)
}

/** Media from a block's `source`: base64 bytes of the given types, or (for images) a URL. */
function media(block: JsonObject, path: string, kind: 'image' | 'document', title: string | undefined): HubPart {
  const where = at(path, 'source')
  const source = SOURCE.object(block.source, where)
  const type = SOURCE.read(source, 'type', where)
  if (type === 'base64') {
    const mimeType = string(source.media_type, at(where, 'media_type')).toLowerCase()
    if (mediaClass(mimeType) !== kind) inexpressible(at(where, 'media_type'), `is '${mimeType}'`)
    return { type: 'media', media: { kind: 'inline', mimeType, data: string(source.data, at(where, 'data')) }, filename: title }
  }
  if (type === 'url' && kind === 'image') {
    const url = string(source.url, at(where, 'url'))
    if (!/^https?:\/\//i.test(url)) refuse(at(where, 'url'), `'${where}.url' must be an http(s) URL.`)
    return { type: 'media', media: { kind: 'url', url, mimeType: imageTypeOfUrl(url) }, filename: undefined }
  }
  return inexpressible(
    at(where, 'type'),
    `is a ${kind} source of type '${type}' (only inline${kind === 'image' ? ' and URL' : ''} ones translate)`,
  )
}

/** A tool result's content as text: a string, or text blocks (other blocks have no place in a tool result elsewhere). */
function resultText(value: unknown, path: string, state: ReadState): string {
  if (absent(value)) return ''
  if (typeof value === 'string') return value
  return array(value, path)
    .map((item, i) => {
      const block = object(item, at(path, i))
      if (block.type !== 'text')
        inexpressible(at(at(path, i), 'type'), `is '${String(block.type)}', which a tool result in the upstream's format cannot carry`)
      return textBlock(block, at(path, i), state)
    })
    .join('')
}

/** The hub parts of one block, read by the role of its message. */
function block(value: unknown, path: string, role: HubMessage['role'], state: ReadState): HubPart[] {
  const item = object(value, path)
  const type = item.type
  if (type === 'text') return [{ type: 'text', text: textBlock(item, path, state) }]
  if (role === 'user' && (type === 'image' || type === 'document')) {
    const shape = type === 'image' ? IMAGE : DOCUMENT
    onlyKnown(item, shape.known, path)
    state.dropped.push(...shape.hinted(item, path))
    return [media(item, path, type, type === 'document' ? DOCUMENT.read(item, 'title', path) : undefined)]
  }
  if (role === 'user' && type === 'tool_result') {
    onlyKnown(item, TOOL_RESULT.known, path)
    state.dropped.push(...TOOL_RESULT.hinted(item, path))
    const id = TOOL_RESULT.read(item, 'tool_use_id', path)
    const name = state.callNames.get(id)
    if (name === undefined)
      refuse(at(path, 'tool_use_id'), `'${path}.tool_use_id' matches no tool_use block of an earlier assistant message.`)
    const text = resultText(item.content, at(path, 'content'), state)
    return [{ type: 'tool_result', id, name, output: { kind: 'text', text }, error: TOOL_RESULT.read(item, 'is_error', path) === true }]
  }
  if (role === 'assistant' && type === 'tool_use') {
    onlyKnown(item, TOOL_USE.known, path)
    state.dropped.push(...TOOL_USE.hinted(item, path))
    const id = TOOL_USE.read(item, 'id', path)
    const name = TOOL_USE.read(item, 'name', path)
    state.callNames.set(id, name)
    const signature = state.signature
    state.signature = undefined
    return [{ type: 'tool_call', id, name, args: TOOL_USE.read(item, 'input', path), signature }]
  }
  if (role === 'assistant' && type === 'thinking') {
    onlyKnown(item, THINKING.known, path)
    const text = THINKING.read(item, 'thinking', path)
    const token = THINKING.read(item, 'signature', path)
    const packed = carried(token)
    if (!packed) return [{ type: 'reasoning', text, signature: token, redacted: false }]
    // A block the gateway wrote to carry another format's signature back: its own text is empty.
    state.signature = packed.signature
    return packed.reasoning
  }
  if (role === 'assistant' && type === 'redacted_thinking') {
    onlyKnown(item, REDACTED_THINKING.known, path)
    return [{ type: 'reasoning', text: '', signature: REDACTED_THINKING.read(item, 'data', path), redacted: true }]
  }
  return inexpressible(at(path, 'type'), `is '${String(type)}', a block this gateway cannot translate in a ${role} message`)
}

/**
 * A block's `cache_control` as the hub's breakpoint (named as dropped by the block's reader until a writer places it),
 * or undefined.
 */
export function cacheOf(block: JsonObject, path: string): HubCachePoint | undefined {
  const control = block.cache_control
  if (typeof control !== 'object' || control === null || (control as JsonObject).type !== 'ephemeral') return undefined
  return { path: at(path, 'cache_control'), ttl: cacheTtl((control as JsonObject).ttl) }
}

/** The parts of a message's content: a string is one text part (none when empty), blocks are read one by one. */
export function contentParts(value: unknown, path: string, role: HubMessage['role'], state: ReadState): HubPart[] {
  if (typeof value === 'string') return value === '' ? [] : [{ type: 'text', text: value }]
  return array(value, path).flatMap((item, i) => {
    const parts = block(item, at(path, i), role, state)
    const cache = cacheOf(item as JsonObject, at(path, i))
    const last = parts.at(-1)
    if (cache !== undefined && last !== undefined) last.cache = cache
    return parts
  })
}

/** A hub breakpoint as `cache_control`, placed: no longer named as dropped. */
export function cacheControl(hub: HubRequest, point: HubCachePoint): MessagesCacheControl {
  cachePlaced(hub, point)
  return point.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: point.ttl }
}

function source(media: HubPart & { type: 'media' }): MessagesSource {
  const { media: m } = media
  return m.kind === 'inline' ? { type: 'base64', media_type: m.mimeType, data: m.data } : { type: 'url', url: m.url }
}

/** A hub part as a block of a request's message. */
function blockOf(part: HubPart): MessagesBlockParam {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return { type: 'text', text: part.text }
    case 'media': {
      const kind = part.media.kind === 'url' ? 'image' : mediaClass(part.media.mimeType)
      if (kind === 'image') return { type: 'image', source: source(part) }
      if (kind !== 'document')
        return inexpressible(
          'messages',
          `holds ${part.media.kind === 'inline' ? part.media.mimeType : 'media'}, which Messages cannot take`,
        )
      const document: MessagesBlockParam = { type: 'document', source: source(part) }
      if (part.filename !== undefined) document.title = part.filename
      return document
    }
    case 'tool_call':
      return { type: 'tool_use', id: part.id, name: part.name, input: part.args }
    case 'tool_result': {
      const result: MessagesBlockParam = { type: 'tool_result', tool_use_id: part.id, content: toolOutputText(part.output) }
      if (part.error) result.is_error = true
      return result
    }
    case 'reasoning':
      return part.redacted
        ? { type: 'redacted_thinking', data: part.signature }
        : { type: 'thinking', thinking: part.text, signature: part.signature }
  }
}

/**
 * A hub message as a request's message: one text part as plain text, as most clients send it; blocks otherwise.
 * Anthropic refuses an empty text block, and tool results after other content, so empty text (a Gemini part that
 * only carried a signature) is left out and results go first.
 */
export function messageOf(message: HubMessage, hub: HubRequest): MessagesMessageParam {
  const parts = message.parts.filter((part) => part.type !== 'text' || part.text !== '')
  const only = parts[0]
  if (parts.length === 1 && only?.type === 'text' && only.cache === undefined) return { role: message.role, content: only.text }
  const results = parts.filter((part) => part.type === 'tool_result')
  const ordered = results.length === 0 ? parts : [...results, ...parts.filter((part) => part.type !== 'tool_result')]
  return {
    role: message.role,
    content: ordered.map((part) => {
      const out = blockOf(part)
      // Anthropic takes no breakpoint on a thinking block: one there stays named as dropped.
      if (part.cache !== undefined && part.type !== 'reasoning') out.cache_control = cacheControl(hub, part.cache)
      return out
    }),
  }
}
