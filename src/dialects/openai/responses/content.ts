// Responses message content and tool outputs ⇄ hub parts.

import { type HubPart, mediaClass } from '../../../translate/hub.js'
import {
  absent,
  array,
  at,
  inexpressible,
  type JsonObject,
  object,
  onlyKnown,
  optional,
  refuse,
  string,
} from '../../../translate/readers.js'
import { imageTypeOfUrl, parseDataUrl } from '../chat-completions/content.js'

/** A file the client uploaded to its provider: no other upstream can read it. */
function storedFile(part: JsonObject, path: string): void {
  if (!absent(part.file_id)) inexpressible(at(path, 'file_id'), "refers to a file stored with the client's provider")
}

function image(part: JsonObject, path: string): HubPart {
  onlyKnown(part, new Set(['type', 'image_url', 'file_id', 'detail']), path)
  storedFile(part, path)
  if (!absent(part.detail) && part.detail !== 'auto') inexpressible(at(path, 'detail'), "asks for an image detail other than 'auto'")
  const url = string(part.image_url, at(path, 'image_url'))
  const inline = parseDataUrl(url)
  if (inline) {
    if (mediaClass(inline.mimeType) !== 'image')
      inexpressible(at(path, 'image_url'), `holds '${inline.mimeType}', not a supported image type`)
    return { type: 'media', media: { kind: 'inline', ...inline }, filename: undefined }
  }
  if (!/^https?:\/\//i.test(url)) refuse(at(path, 'image_url'), `'${path}.image_url' must be an http(s) or base64 data URL.`)
  return { type: 'media', media: { kind: 'url', url, mimeType: imageTypeOfUrl(url) }, filename: undefined }
}

function file(part: JsonObject, path: string): HubPart {
  onlyKnown(part, new Set(['type', 'file_data', 'filename', 'file_id', 'file_url']), path)
  storedFile(part, path)
  if (!absent(part.file_url)) inexpressible(at(path, 'file_url'), "is a file by URL (send its bytes in 'file_data')")
  const inline = parseDataUrl(string(part.file_data, at(path, 'file_data')))
  if (!inline) refuse(at(path, 'file_data'), `'${path}.file_data' must be a base64 data URL.`)
  if (mediaClass(inline.mimeType) === undefined) inexpressible(at(path, 'file_data'), `holds '${inline.mimeType}'`)
  return { type: 'media', media: { kind: 'inline', ...inline }, filename: optional(part, 'filename', path, string) }
}

/** The parts of a user message: text, images and documents. */
export function userParts(value: unknown, path: string): HubPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }]
  return array(value, path).map((item, i) => {
    const where = at(path, i)
    const part = object(item, where)
    if (part.type === 'input_text') return { type: 'text', text: onlyText(part, where, '') }
    if (part.type === 'input_image') return image(part, where)
    if (part.type === 'input_file') return file(part, where)
    return inexpressible(at(where, 'type'), `is '${String(part.type)}', a content part this gateway cannot translate`)
  })
}

/** The text of an `input_text` part where no other part may stand; `what` says where that is. */
function onlyText(item: unknown, path: string, what: string): string {
  const part = object(item, path)
  if (part.type !== 'input_text') inexpressible(at(path, 'type'), `is a content part other than text, which ${what}`)
  onlyKnown(part, new Set(['type', 'text']), path)
  return string(part.text, at(path, 'text'))
}

/** The text of a system or developer message, one entry per part. */
export function systemTexts(value: unknown, path: string): string[] {
  if (typeof value === 'string') return [value]
  return array(value, path).map((item, i) => onlyText(item, at(path, i), 'a system message cannot hold'))
}

/** The parts of an assistant message sent back: its text and refusals (citations and log probabilities change nothing). */
export function assistantParts(value: unknown, path: string): HubPart[] {
  if (typeof value === 'string') return value === '' ? [] : [{ type: 'text', text: value }]
  return array(value, path).map((item, i): HubPart => {
    const where = at(path, i)
    const part = object(item, where)
    if (part.type === 'output_text') {
      onlyKnown(part, new Set(['type', 'text', 'annotations', 'logprobs']), where)
      return { type: 'text', text: string(part.text, at(where, 'text')) }
    }
    if (part.type === 'refusal') {
      onlyKnown(part, new Set(['type', 'refusal']), where)
      return { type: 'refusal', text: string(part.refusal, at(where, 'refusal')) }
    }
    return inexpressible(at(where, 'type'), 'is a content part not allowed in an assistant message')
  })
}

/** A function's output as the text it returned: a string, or text parts (other parts have no place in a tool result). */
export function outputText(value: unknown, path: string): string {
  if (typeof value === 'string') return value
  return array(value, path)
    .map((item, i) => onlyText(item, at(path, i), "a tool result in the upstream's format cannot carry"))
    .join('')
}
