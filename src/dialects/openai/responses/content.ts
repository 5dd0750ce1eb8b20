// Responses message content and tool outputs ⇄ hub parts.

import { type HubPart, imageTypeOfUrl, mediaClass } from '../../../translate/hub.js'
import { field, optionalField, payload } from '../../../translate/payload.js'
import {
  absent,
  array,
  at,
  inexpressible,
  type JsonObject,
  object,
  onlyKnown,
  refuse,
  string,
  unchecked,
} from '../../../translate/readers.js'
import { parseDataUrl } from '../chat-completions/content.js'

/** A file the client uploaded to its provider: no other upstream can read it. */
function storedFile(part: JsonObject, path: string): void {
  if (!absent(part.file_id)) inexpressible(at(path, 'file_id'), "refers to a file stored with the client's provider")
}

/** An `input_image` part; `file_id` and a `detail` other than 'auto' are members another format cannot take. */
const IMAGE = payload({
  type: field(string),
  image_url: field(string),
  file_id: optionalField(string),
  detail: optionalField(string),
})

function image(part: JsonObject, path: string): HubPart {
  onlyKnown(part, IMAGE.known, path)
  storedFile(part, path)
  if (!absent(part.detail) && part.detail !== 'auto') inexpressible(at(path, 'detail'), "asks for an image detail other than 'auto'")
  const url = IMAGE.read(part, 'image_url', path)
  const inline = parseDataUrl(url)
  if (inline) {
    if (mediaClass(inline.mimeType) !== 'image')
      inexpressible(at(path, 'image_url'), `holds '${inline.mimeType}', not a supported image type`)
    return { type: 'media', media: { kind: 'inline', ...inline }, filename: undefined }
  }
  if (!/^https?:\/\//i.test(url)) refuse(at(path, 'image_url'), `'${path}.image_url' must be an http(s) or base64 data URL.`)
  return { type: 'media', media: { kind: 'url', url, mimeType: imageTypeOfUrl(url) }, filename: undefined }
}

/** An `input_file` part; only `file_data` (a data URL) is a file another format can take. */
const FILE = payload({
  type: field(string),
  file_data: field(string),
  filename: optionalField(string),
  file_id: optionalField(string),
  file_url: optionalField(string),
})

function file(part: JsonObject, path: string): HubPart {
  onlyKnown(part, FILE.known, path)
  storedFile(part, path)
  if (!absent(part.file_url)) inexpressible(at(path, 'file_url'), "is a file by URL (send its bytes in 'file_data')")
  const inline = parseDataUrl(FILE.read(part, 'file_data', path))
  if (!inline) refuse(at(path, 'file_data'), `'${path}.file_data' must be a base64 data URL.`)
  if (mediaClass(inline.mimeType) === undefined) inexpressible(at(path, 'file_data'), `holds '${inline.mimeType}'`)
  return { type: 'media', media: { kind: 'inline', ...inline }, filename: FILE.read(part, 'filename', path) }
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

const INPUT_TEXT = payload({ type: field(string), text: field(string) })

/** The text of an `input_text` part where no other part may stand; `what` says where that is. */
function onlyText(item: unknown, path: string, what: string): string {
  const part = object(item, path)
  if (part.type !== 'input_text') inexpressible(at(path, 'type'), `is a content part other than text, which ${what}`)
  onlyKnown(part, INPUT_TEXT.known, path)
  return INPUT_TEXT.read(part, 'text', path)
}

/** The text of a system or developer message, one entry per part. */
export function systemTexts(value: unknown, path: string): string[] {
  if (typeof value === 'string') return [value]
  return array(value, path).map((item, i) => onlyText(item, at(path, i), 'a system message cannot hold'))
}

/** An `output_text` part sent back: its citations and log probabilities change nothing the model reads. */
const OUTPUT_TEXT = payload({
  type: field(string),
  text: field(string),
  annotations: optionalField(unchecked),
  logprobs: optionalField(unchecked),
})
const REFUSAL = payload({ type: field(string), refusal: field(string) })

/** The parts of an assistant message sent back: its text and refusals (citations and log probabilities change nothing). */
export function assistantParts(value: unknown, path: string): HubPart[] {
  if (typeof value === 'string') return value === '' ? [] : [{ type: 'text', text: value }]
  return array(value, path).map((item, i): HubPart => {
    const where = at(path, i)
    const part = object(item, where)
    if (part.type === 'output_text') {
      onlyKnown(part, OUTPUT_TEXT.known, where)
      return { type: 'text', text: OUTPUT_TEXT.read(part, 'text', where) }
    }
    if (part.type === 'refusal') {
      onlyKnown(part, REFUSAL.known, where)
      return { type: 'refusal', text: REFUSAL.read(part, 'refusal', where) }
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
