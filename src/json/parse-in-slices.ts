// JSON text of a large value parsed a slice at a time: a Responses stream ends with its whole answer in one event,
// and `JSON.parse` of a 34 MB one stalled every other request for a twentieth of a second.

import { randomBytes } from 'node:crypto'
import { TEXT_SLICE_CHARS } from './text-in-slices.js'

/** Parses `text`, or undefined when it is not JSON. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Whether the string literal whose closing quote is at `end` is an object's key (a `:` follows it). */
function isKey(text: string, end: number): boolean {
  for (let at = end + 1; at < text.length; at++) {
    const c = text.charCodeAt(at)
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c === 0x3a
  }
  return false
}

/**
 * Where a string literal's text may be cut before `cut` so that both parts parse alone: never inside an escape (at
 * most six characters, `\uXXXX`), so before a run of backslashes near the cut. Undefined when there is no such place
 * after `from` (a run of backslashes as long as a slice).
 */
function safeCut(text: string, from: number, cut: number): number | undefined {
  let backslash = -1
  for (let at = Math.max(from, cut - 6); at < cut; at++) if (text.charCodeAt(at) === 0x5c) backslash = at
  if (backslash < 0) return cut
  let run = backslash
  while (run > from && text.charCodeAt(run - 1) === 0x5c) run--
  return run > from ? run : undefined
}

/** The string literal `text[open..close]` (its quotes included) parsed a slice at a time; undefined when not valid. */
async function bigString(text: string, open: number, close: number, sliceChars: number): Promise<string | undefined> {
  let out = ''
  for (let at = open + 1; at < close; ) {
    const cut = at + sliceChars >= close ? close : (safeCut(text, at, at + sliceChars) ?? close)
    const piece = parsed(`"${text.slice(at, cut)}"`)
    if (typeof piece !== 'string') return undefined
    out += piece
    at = cut
    await new Promise(setImmediate)
  }
  return out
}

/**
 * `JSON.parse(text)`, or undefined when `text` is not JSON (as `parseJson`), with a turn of the event loop after
 * each `sliceChars` characters: string values longer than that are parsed a slice at a time and put in place of
 * stand-ins in the rest, which is parsed at once. The stand-ins carry a random tag, so no string of the text can be
 * taken for one.
 */
export async function parseJsonInSlices(text: string, sliceChars = TEXT_SLICE_CHARS): Promise<unknown> {
  if (text.length <= sliceChars) return parsed(text)
  // The string literals, found by their quotes alone: outside a literal no quote appears, inside one only escaped.
  const big: Array<[number, number]> = []
  // Where the scan last took a turn: inside a long literal too, whose escaped quotes (a kept JSON answer is full of
  // them) made one scan of a 30 MB value stall the loop for a third of a second.
  let mark = 0
  for (let at = 0; ; ) {
    const open = text.indexOf('"', at)
    if (open < 0) break
    let close = open
    for (;;) {
      close = text.indexOf('"', close + 1)
      if (close < 0) return undefined
      let backslashes = 0
      while (text.charCodeAt(close - 1 - backslashes) === 0x5c) backslashes++
      if (backslashes % 2 === 0) break
      if (close - mark >= sliceChars) {
        mark = close
        await new Promise(setImmediate)
      }
    }
    if (close - open - 1 > sliceChars && !isKey(text, close)) big.push([open, close])
    at = close + 1
    if (at - mark >= sliceChars) {
      mark = at
      await new Promise(setImmediate)
    }
  }
  if (big.length === 0) return parsed(text)
  const tag = `\u0000${randomBytes(12).toString('hex')}:`
  const strings: string[] = []
  let rest = ''
  let from = 0
  for (const [open, close] of big) {
    const value = await bigString(text, open, close, sliceChars)
    if (value === undefined) return undefined
    rest += `${text.slice(from, open)}${JSON.stringify(`${tag}${strings.length}`)}`
    strings.push(value)
    from = close + 1
  }
  rest += text.slice(from)
  try {
    return JSON.parse(rest, (_key, value: unknown) =>
      typeof value === 'string' && value.startsWith(tag) ? strings[Number(value.slice(tag.length))] : value,
    )
  } catch {
    return undefined
  }
}

/** Whether the string literal whose closing quote is at byte `end` is an object's key (a `:` follows it). */
function isKeyAt(bytes: Buffer, end: number): boolean {
  for (let at = end + 1; at < bytes.length; at++) {
    const c = bytes[at] as number
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c === 0x3a
  }
  return false
}

/** Whether `bytes[from..to]` holds a control character, which JSON text never holds raw inside a string literal. */
function hasRawControl(bytes: Buffer, from: number, to: number): boolean {
  for (let at = from; at < to; at++) if ((bytes[at] as number) < 0x20) return true
  return false
}

/**
 * The text of the string literal whose characters are `bytes[from..to]` (its quotes left out), decoded and parsed a
 * slice at a time; undefined when not valid. A slice without a backslash is its own text: it is decoded only, not
 * copied again by a parse.
 */
async function bigStringOfBytes(bytes: Buffer, from: number, to: number, sliceBytes: number): Promise<string | undefined> {
  let out = ''
  for (let at = from; at < to; ) {
    // No place to cut within a slice (a character or a run of backslashes as long as one): the rest at once.
    const cut = at + sliceBytes >= to ? to : (safeByteCut(bytes, at, at + sliceBytes) ?? to)
    const escaped = bytes.subarray(at, cut).includes(0x5c)
    const text = bytes.toString('utf8', at, cut)
    const piece = escaped ? parsed(`"${text}"`) : hasRawControl(bytes, at, cut) ? undefined : text
    if (typeof piece !== 'string') return undefined
    out += piece
    at = cut
    await new Promise(setImmediate)
  }
  return out
}

/**
 * `parseJsonInSlices` of UTF-8 `bytes` without their whole text: the string values longer than a slice are decoded
 * a slice at a time into their own text, the rest decoded and parsed at once with stand-ins for them. Decoding a
 * 10 MB request whole first made two more copies of it (the text, then the same text joined to be scanned).
 */
export async function parseJsonBytesInSlices(bytes: Buffer, sliceBytes = TEXT_SLICE_CHARS): Promise<unknown> {
  if (bytes.length <= sliceBytes) return parsed(bytes.toString('utf8'))
  const big: Array<[number, number]> = []
  let mark = 0
  // The string literals, found by their quote bytes alone, as in parseJsonInSlices: UTF-8 puts no quote or backslash
  // byte inside a character.
  for (let at = 0; ; ) {
    const open = bytes.indexOf(0x22, at)
    if (open < 0) break
    let close = open
    for (;;) {
      close = bytes.indexOf(0x22, close + 1)
      if (close < 0) return undefined
      let backslashes = 0
      while (bytes[close - 1 - backslashes] === 0x5c) backslashes++
      if (backslashes % 2 === 0) break
      if (close - mark >= sliceBytes) {
        mark = close
        await new Promise(setImmediate)
      }
    }
    if (close - open - 1 > sliceBytes && !isKeyAt(bytes, close)) big.push([open, close])
    at = close + 1
    if (at - mark >= sliceBytes) {
      mark = at
      await new Promise(setImmediate)
    }
  }
  if (big.length === 0) return parsed(bytes.toString('utf8'))
  const tag = `\u0000${randomBytes(12).toString('hex')}:`
  const strings: string[] = []
  let rest = ''
  let from = 0
  for (const [open, close] of big) {
    const value = await bigStringOfBytes(bytes, open + 1, close, sliceBytes)
    if (value === undefined) return undefined
    rest += `${bytes.toString('utf8', from, open)}${JSON.stringify(`${tag}${strings.length}`)}`
    strings.push(value)
    from = close + 1
  }
  rest += bytes.toString('utf8', from)
  try {
    return JSON.parse(rest, (_key, value: unknown) =>
      typeof value === 'string' && value.startsWith(tag) ? strings[Number(value.slice(tag.length))] : value,
    )
  } catch {
    return undefined
  }
}

/** How Keyv's default serializer begins what it writes for a string value. */
const KEYV_STRING_HEAD = Buffer.from('{"value":"')

/**
 * Where a UTF-8 string literal's bytes may be cut before `cut`: on a character's first byte, never inside an escape.
 * Undefined when there is no such place after `from`.
 */
function safeByteCut(bytes: Buffer, from: number, cut: number): number | undefined {
  let at = cut
  // Multi-byte characters hold no quote or backslash byte: only their first byte is a place to cut.
  while (at > from && ((bytes[at] as number) & 0xc0) === 0x80) at--
  let backslash = -1
  for (let i = Math.max(from, at - 6); i < at; i++) if (bytes[i] === 0x5c) backslash = i
  if (backslash < 0) return at > from ? at : undefined
  let run = backslash
  while (run > from && bytes[run - 1] === 0x5c) run--
  return run > from ? run : undefined
}

/**
 * The `{ value, expires }` Keyv's default serializer wrote for a string that carries no mark (no leading `:`), read
 * from its UTF-8 bytes a slice at a time, with a turn of the event loop after each `sliceBytes`: the bytes are never
 * decoded whole, nor is the text scanned in one go. Undefined when the bytes are anything else (read them whole).
 */
export async function keyvStringInSlices(
  bytes: Buffer,
  sliceBytes = TEXT_SLICE_CHARS,
): Promise<{ value: string; expires: unknown } | undefined> {
  const from = KEYV_STRING_HEAD.length
  if (bytes.length <= from || !bytes.subarray(0, from).equals(KEYV_STRING_HEAD) || bytes[from] === 0x3a) return undefined
  // The literal's closing quote: a quote byte after an even run of backslashes (UTF-8 puts neither inside a character).
  let close = from - 1
  let mark = from
  for (;;) {
    close = bytes.indexOf(0x22, close + 1)
    if (close < 0) return undefined
    let backslashes = 0
    while (bytes[close - 1 - backslashes] === 0x5c) backslashes++
    if (backslashes % 2 === 0) break
    if (close - mark >= sliceBytes) {
      mark = close
      await new Promise(setImmediate)
    }
  }
  const rest = parsed(`{"value":0${bytes.toString('utf8', close + 1)}`)
  if (typeof rest !== 'object' || rest === null) return undefined
  const value = await bigStringOfBytes(bytes, from, close, sliceBytes)
  return value === undefined ? undefined : { value, expires: (rest as { expires?: unknown }).expires }
}
