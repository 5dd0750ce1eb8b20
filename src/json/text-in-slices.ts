// JSON text of a large value, written a slice at a time: `JSON.stringify` of a kept record's 34 MB answer stalled
// every other request for a tenth of a second.

import { joinedNow, joinInSlices } from '../http/join-chunks.js'

/** JSON text and its size in UTF-8 bytes, measured as it was written. */
export interface SizedText {
  text: string
  bytes: number
}

/** Characters written between two turns of the event loop. */
export const TEXT_SLICE_CHARS = 1024 * 1024

/** A container being written: its members (keys, for an object) and the next one's index. */
interface Frame {
  value: Record<string, unknown> | unknown[]
  keys: string[] | undefined
  next: number
  wrote: boolean
}

/** Whether `value` is written by `JSON.stringify` in one piece: everything but plain objects, arrays and strings. */
function atomic(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'string'
  return value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt
}

/** The value JSON.stringify writes for `value` under `key`, after `toJSON`. */
function prepared(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON
    if (typeof toJSON === 'function') return toJSON.call(value, key)
  }
  return value
}

/** Whether JSON.stringify leaves out a member with this value (or writes `null` for it in an array). */
function skipped(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol'
}

/**
 * `JSON.stringify(value)` (no replacer, no indentation), the same text to the byte, written with a turn of the event
 * loop after each `sliceChars` characters: strings longer than that are escaped a slice at a time (never between the
 * two halves of a surrogate pair, which `JSON.stringify` escapes differently alone), and containers are walked
 * without recursion. Rejects as `JSON.stringify` throws (a cycle, a BigInt); undefined for a top-level value it
 * leaves out.
 */
export async function jsonTextInSlices(value: unknown, sliceChars = TEXT_SLICE_CHARS): Promise<SizedText | undefined> {
  let text = ''
  let bytes = 0
  const written = await writeJson(value, sliceChars, (piece) => {
    text += piece
    bytes += Buffer.byteLength(piece, 'utf8')
  })
  return written ? { text, bytes } : undefined
}

/** Pieces of text gathered before they are encoded into one buffer. */
const BYTES_CHUNK_CHARS = 64 * 1024

/**
 * `jsonTextInSlices` as UTF-8 bytes, between `before` and `after` (written as they are): what a store that takes
 * bytes is sent, encoded a slice at a time rather than all at once from the finished text. Given `expectedBytes`
 * (about the size it will be), the text is encoded straight into one buffer of that size, grown only if it was too
 * small, rather than into pieces joined at the end: the pieces were one more copy of a 10 MB request.
 */
export async function jsonBytesInSlices(
  value: unknown,
  before = '',
  after = '',
  sliceChars = TEXT_SLICE_CHARS,
  expectedBytes?: number,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  let pending = before
  // Shared memory, as `joinInSlices` makes, which the hashing worker reads without a copy of its own.
  let into = expectedBytes === undefined ? undefined : Buffer.from(new SharedArrayBuffer(Math.max(64, expectedBytes)))
  const flush = () => {
    if (into === undefined) {
      const chunk = Buffer.from(pending, 'utf8')
      chunks.push(chunk)
      size += chunk.length
    } else {
      const needed = size + Buffer.byteLength(pending, 'utf8')
      if (needed > into.length) {
        const larger = Buffer.from(new SharedArrayBuffer(Math.max(needed, 2 * into.length)))
        into.copy(larger, 0, 0, size)
        into = larger
      }
      size += into.write(pending, size, 'utf8')
    }
    pending = ''
  }
  const written = await writeJson(value, sliceChars, (piece) => {
    pending += piece
    if (pending.length >= BYTES_CHUNK_CHARS) flush()
  })
  if (!written) return undefined
  pending += after
  flush()
  if (into !== undefined) return into.subarray(0, size)
  return joinedNow(chunks, size) ?? (await joinInSlices(chunks, size))
}

/** Writes the JSON text of `value` to `sink` piece by piece (see `jsonTextInSlices`); false when it is left out. */
async function writeJson(value: unknown, sliceChars: number, sink: (piece: string) => void): Promise<boolean> {
  const root = prepared(value, '')
  if (skipped(root)) return false
  let sinceTurn = 0
  const write = async (piece: string) => {
    sink(piece)
    sinceTurn += piece.length
    if (sinceTurn >= sliceChars) {
      sinceTurn = 0
      await new Promise(setImmediate)
    }
  }
  const stack: Frame[] = []
  const open = new Set<object>()
  /** Writes a value that is not left out: in one piece, a string in slices, or a container's opening. */
  const begin = async (item: unknown) => {
    if (typeof item === 'string') {
      if (item.length <= sliceChars) return write(JSON.stringify(item))
      await write('"')
      for (let from = 0; from < item.length; ) {
        let end = Math.min(item.length, from + sliceChars)
        const last = item.charCodeAt(end - 1)
        if (end < item.length && end - 1 > from && last >= 0xd800 && last <= 0xdbff) end--
        await write(JSON.stringify(item.slice(from, end)).slice(1, -1))
        from = end
      }
      return write('"')
    }
    if (atomic(item)) return write(JSON.stringify(item))
    const container = item as Record<string, unknown> | unknown[]
    if (open.has(container)) throw new TypeError('Converting circular structure to JSON')
    open.add(container)
    const isArray = Array.isArray(container)
    stack.push({ value: container, keys: isArray ? undefined : Object.keys(container), next: 0, wrote: false })
    return write(isArray ? '[' : '{')
  }
  await begin(root)
  while (stack.length > 0) {
    const frame = stack.at(-1) as Frame
    const { value: container, keys } = frame
    const size = keys ? keys.length : (container as unknown[]).length
    if (frame.next >= size) {
      stack.pop()
      open.delete(container)
      await write(keys ? '}' : ']')
      continue
    }
    const index = frame.next++
    const key = keys ? (keys[index] as string) : String(index)
    const member = prepared((container as Record<string, unknown>)[key], key)
    if (keys && skipped(member)) continue
    const separator = frame.wrote ? ',' : ''
    frame.wrote = true
    if (keys) await write(`${separator}${JSON.stringify(key)}:`)
    else if (separator) await write(separator)
    if (skipped(member)) await write('null')
    else await begin(member)
  }
  return true
}
