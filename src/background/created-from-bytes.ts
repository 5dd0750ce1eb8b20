// The created event of a large background create, written from the request's bytes: the members too big for the
// body's skeleton (megabytes of instructions) are copied from the bytes into the event's text as the client wrote
// them, never parsed into strings and written out again. Parsing, then writing the event, took four times the
// request in strings besides the body (the parsed value, its joined copy, the writer's parts, the event).
import { isAscii } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import type { BackgroundFormat } from '../dialects/index.js'
import { decodeInSlices, SliceTurns } from '../http/join-chunks.js'
import { SMALL_VALUE_BYTES } from '../json/scan-body.js'
import type { TopMembers } from '../json/top-members.js'
import { keptEvent, objectSpan } from './kept-event.js'

/** A call's first state made from a request's bytes: its object with stand-ins, and its created event's text. */
export interface CreatedFromBytes {
  /**
   * The object as created, with a stand-in for each member too big for the skeleton: never shown or written as it is.
   * `RunLog` reads the object from `text` when it needs it whole.
   */
  pending: Record<string, unknown>
  /** The created event's text, the stand-ins replaced by the request's own text of their members. */
  text: string
}

/** How often `needle` occurs in `text`. */
function count(text: string, needle: string): number {
  let n = 0
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) n++
  return n
}

/**
 * The first state of the call `bytes` asks for, or undefined when it cannot be made this way: a member too big for
 * the skeleton that is an object (the format may read inside it), or a stand-in the format's object shows in any
 * form but whole (a format must show a member whole or not at all, see `BackgroundFormat.pending`).
 */
export async function createdFromBytes(
  format: BackgroundFormat,
  id: string,
  createdAt: number,
  bytes: Buffer,
  fields: Record<string, unknown>,
  found: TopMembers,
): Promise<CreatedFromBytes | undefined> {
  const nonce = randomBytes(6).toString('hex')
  const tag = `\u0000raw${nonce}:`
  const standIn: Record<string, unknown> = { ...fields }
  const spans: Array<readonly [number, number, boolean]> = []
  for (const member of found.members) {
    if (member.end - member.valueStart <= SMALL_VALUE_BYTES) continue
    const first = bytes[member.valueStart]
    if (member.key === undefined || (first !== 0x22 && first !== 0x5b)) return undefined
    const mark = `${tag}${spans.length}`
    spans.push([member.valueStart, member.end, first === 0x5b])
    Object.defineProperty(standIn, member.key, {
      value: first === 0x22 ? mark : [mark],
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  if (spans.length === 0) return undefined
  const pending = format.pending(id, standIn, createdAt)
  const data = format.createdEvent(pending)
  const small = keptEvent(data, 0)
  // The pieces of the event: its own text between stand-ins, and the spans of the bytes they stand for.
  const pieces: Array<string | readonly [number, number]> = []
  const shown = JSON.stringify(tag).slice(1, -1)
  let from = 0
  for (let at = small.indexOf(shown); at >= 0; at = small.indexOf(shown, at + 1)) {
    let digits = at + shown.length
    while (small.charCodeAt(digits) >= 0x30 && small.charCodeAt(digits) <= 0x39) digits++
    const span = spans[Number(small.slice(at + shown.length, digits))]
    if (span === undefined) return undefined
    // Whole or not at all: `"<mark>"` for a string, `["<mark>"]` for an array.
    const open = at - (span[2] ? 2 : 1)
    const close = digits + (span[2] ? 2 : 1)
    if (small.slice(open, at) !== (span[2] ? '["' : '"') || small.slice(digits, close) !== (span[2] ? '"]' : '"')) return undefined
    pieces.push(small.slice(from, open), [span[0], span[1]])
    from = close
  }
  pieces.push(small.slice(from))
  // A stand-in shown changed (cut, say) leaves its NUL or its nonce behind, where no whole one was found.
  const whole = (pieces.length - 1) / 2
  if (count(small, '\\u0000') !== whole || count(small, nonce) !== whole) return undefined
  let length = 0
  for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece[1] - piece[0]
  // Written into one buffer and decoded once: joining strings would copy the megabytes once more when read.
  const out = Buffer.allocUnsafe(length)
  let at = 0
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      at += out.write(piece, at, 'utf8')
      continue
    }
    const copied = out.subarray(at, at + bytes.copy(out, at, piece[0], piece[1]))
    // Line breaks between an array's elements would end the event's `data:` line; inside a string JSON has none raw.
    for (let n = copied.indexOf(0x0a); n >= 0; n = copied.indexOf(0x0a, n + 1)) copied[n] = 0x20
    for (let r = copied.indexOf(0x0d); r >= 0; r = copied.indexOf(0x0d, r + 1)) copied[r] = 0x20
    at += copied.length
  }
  // ASCII at once (one native pass); anything else a slice at a time: 20 MB of it with accents and emoji took 70 ms.
  const text = isAscii(out) ? out.toString('latin1') : (await decodeInSlices(out, 0, out.length, new SliceTurns())).text
  return objectSpan(text, data, pending, 0) === undefined ? undefined : { pending, text }
}
