// Chat message content parts ⇄ hub parts.

import { type HubMedia, type HubPart, imageTypeOfUrl, mediaClass } from '../../../translate/hub.js'
import { field, optionalField, payload } from '../../../translate/payload.js'
import { absent, array, at, inexpressible, type JsonObject, object, optional, refuse, string } from '../../../translate/readers.js'
import type { ChatContentPart } from './wire.js'

const AUDIO_MIME: Readonly<Record<string, string>> = { wav: 'audio/wav', mp3: 'audio/mp3' }

/** A `data:` URL's type and base64 payload. */
export function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([\w.+-]+\/[\w.+-]+)(?:;[\w.+-]+=[^;,]*)*;base64,(.*)$/s.exec(url)
  if (!match) return undefined
  const [, mimeType = '', data = ''] = match
  return { mimeType: mimeType.toLowerCase(), data }
}

/** The text (and, for assistant turns, refusal) parts of a message content. */
export function text(value: unknown, path: string, allowRefusal: boolean): HubPart[] {
  if (typeof value === 'string') return value === '' ? [] : [{ type: 'text', text: value }]
  return array(value, path).map((item, i) => {
    const where = at(path, i)
    const part = object(item, where)
    if (part.type === 'text') return { type: 'text', text: string(part.text, at(where, 'text')) }
    if (allowRefusal && part.type === 'refusal') return { type: 'refusal', text: string(part.refusal, at(where, 'refusal')) }
    return inexpressible(at(where, 'type'), 'is a content part not allowed in this message')
  })
}

/** `image_url` of an image part: a `detail` other than 'auto' is refused, as Gemini has no such setting. */
const IMAGE_URL = payload({ url: field(string), detail: optionalField(string) })

function media(part: JsonObject, path: string): HubPart {
  if (part.type === 'image_url') {
    const image = IMAGE_URL.object(part.image_url, at(path, 'image_url'))
    if (!absent(image.detail) && image.detail !== 'auto')
      inexpressible(at(path, 'image_url.detail'), "asks for an image detail other than 'auto'")
    const url = IMAGE_URL.read(image, 'url', at(path, 'image_url'))
    const inline = parseDataUrl(url)
    if (inline) {
      if (mediaClass(inline.mimeType) !== 'image')
        inexpressible(at(path, 'image_url.url'), `holds '${inline.mimeType}', not a supported image type`)
      return { type: 'media', media: { kind: 'inline', ...inline }, filename: undefined }
    }
    if (!/^https?:\/\//i.test(url)) refuse(at(path, 'image_url.url'), `'${path}.image_url.url' must be an http(s) or base64 data URL.`)
    return { type: 'media', media: { kind: 'url', url, mimeType: imageTypeOfUrl(url) }, filename: undefined }
  }
  if (part.type === 'input_audio') {
    const audio = object(part.input_audio, at(path, 'input_audio'))
    const format = string(audio.format, at(path, 'input_audio.format'))
    const mimeType = AUDIO_MIME[format]
    if (mimeType === undefined) inexpressible(at(path, 'input_audio.format'), `is '${format}', not wav or mp3`)
    return {
      type: 'media',
      media: { kind: 'inline', mimeType, data: string(audio.data, at(path, 'input_audio.data')) },
      filename: undefined,
    }
  }
  if (part.type === 'file') {
    const file = object(part.file, at(path, 'file'))
    if (!absent(file.file_id)) inexpressible(at(path, 'file.file_id'), "refers to a file stored with the client's provider")
    const inline = parseDataUrl(string(file.file_data, at(path, 'file.file_data')))
    if (!inline) refuse(at(path, 'file.file_data'), `'${path}.file.file_data' must be a base64 data URL.`)
    if (mediaClass(inline.mimeType) === undefined) inexpressible(at(path, 'file.file_data'), `holds '${inline.mimeType}'`)
    return { type: 'media', media: { kind: 'inline', ...inline }, filename: optional(file, 'filename', at(path, 'file'), string) }
  }
  return inexpressible(at(path, 'type'), `is '${String(part.type)}', a content part this gateway cannot translate`)
}

/** The parts of a user message: text, images, audio and documents. */
export function userParts(value: unknown, path: string): HubPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }]
  return array(value, path).map((item, i) => {
    const part = object(item, at(path, i))
    return part.type === 'text' ? { type: 'text', text: string(part.text, at(at(path, i), 'text')) } : media(part, at(path, i))
  })
}

function dataUrl(media: HubMedia & { kind: 'inline' }): string {
  return `data:${media.mimeType};base64,${media.data}`
}

function contentPart(part: HubPart): ChatContentPart {
  if (part.type === 'text' || part.type === 'refusal') return { type: 'text', text: part.text }
  if (part.type !== 'media') throw new TypeError(`a ${part.type} part is not content`)
  const { media } = part
  if (media.kind === 'url') return { type: 'image_url', image_url: { url: media.url } }
  const kind = mediaClass(media.mimeType)
  if (kind === 'audio')
    return { type: 'input_audio', input_audio: { data: media.data, format: media.mimeType === 'audio/wav' ? 'wav' : 'mp3' } }
  if (kind === 'document') return { type: 'file', file: { file_data: dataUrl(media), filename: part.filename ?? 'document.pdf' } }
  return { type: 'image_url', image_url: { url: dataUrl(media) } }
}

/** Plain text when a message is one text part, as most servers expect; parts otherwise. */
export function content(parts: HubPart[]): string | ChatContentPart[] {
  const only = parts[0]
  if (parts.length === 1 && only?.type === 'text') return only.text
  return parts.map(contentPart)
}
