// Joining the chunks of a whole body (a request's, an upstream answer's) into one buffer.

/** Bodies from this size on are joined a slice at a time: below it one copy costs less than a turn of the loop. */
export const JOIN_IN_SLICES_FROM_BYTES = 1024 * 1024

/**
 * At most this much is copied per turn of the event loop, page faults of fresh memory included: 4 MiB at a time was
 * a visible share of the longest stalls while 20 MiB bodies were in flight.
 */
const SLICE_BYTES = 1024 * 1024

/**
 * One buffer of `chunks`, `size` bytes in all, synchronously when that is cheap (one chunk, or a small body), else
 * `undefined`: join it with `joinInSlices`.
 */
export function joinedNow(chunks: readonly Buffer[], size: number): Buffer | undefined {
  if (chunks.length === 1) return chunks[0]
  return size < JOIN_IN_SLICES_FROM_BYTES ? Buffer.concat(chunks, size) : undefined
}

/**
 * Joins a large body a slice at a time with a turn of the event loop between slices: one copy of 60 MB into fresh
 * memory stalls every other request for 40 ms or more. The buffer is shared memory, which the hashing worker reads
 * without a copy of its own (a structured clone of 60 MB is another such stall).
 */
export async function joinInSlices(chunks: readonly Buffer[], size: number): Promise<Buffer> {
  const joined = Buffer.from(new SharedArrayBuffer(size))
  let at = 0
  let sinceTurn = 0
  for (const chunk of chunks) {
    for (let from = 0; from < chunk.length; ) {
      if (sinceTurn >= SLICE_BYTES) {
        await new Promise(setImmediate)
        sinceTurn = 0
      }
      const end = Math.min(chunk.length, from + SLICE_BYTES - sinceTurn)
      chunk.copy(joined, at, from, end)
      at += end - from
      sinceTurn += end - from
      from = end
    }
  }
  return joined
}

/** Counts the bytes worked through since the last turn of the event loop, and takes one after each slice. */
export class SliceTurns {
  #since = 0

  constructor(readonly sliceBytes = SLICE_BYTES) {}

  /** How many bytes the current slice has room for (at least four: one character). */
  room(): number {
    return Math.max(4, this.sliceBytes - this.#since)
  }

  /** Counts `bytes` worked through, and takes a turn of the event loop once a slice is full. */
  async spent(bytes: number): Promise<void> {
    this.#since += bytes
    if (this.#since >= this.sliceBytes) {
      this.#since = 0
      await new Promise(setImmediate)
    }
  }
}

/** Where a UTF-8 window may end before `end` without cutting a character: before a byte that starts one. */
function characterEdge(chunk: Buffer, from: number, end: number, to: number): number {
  if (end >= to) return to
  // A character is at most four bytes: past three continuation bytes, the bytes are stray and decode one by one.
  for (let at = end; at > from && at > end - 4; at--) if (((chunk[at] as number) & 0xc0) !== 0x80) return at
  return end
}

/**
 * The UTF-8 text of `chunk[from..to]` (ending on a character boundary) and its size in bytes as text (invalid bytes
 * decoded as U+FFFD), decoded a slice at a time: the same text as `toString('utf8', from, to)`.
 */
export async function decodeInSlices(chunk: Buffer, from: number, to: number, turns: SliceTurns): Promise<{ text: string; bytes: number }> {
  let text = ''
  let bytes = 0
  for (let at = from; at < to; ) {
    const end = characterEdge(chunk, at, at + turns.room(), to)
    const piece = chunk.toString('utf8', at, end)
    text += piece
    bytes += Buffer.byteLength(piece, 'utf8')
    await turns.spent(end - at)
    at = end
  }
  return { text, bytes }
}

/**
 * The UTF-8 text of `chunks` (each ending on a character boundary, as whole SSE events do) and its size in bytes as
 * text, decoded a slice at a time with a turn of the event loop between slices: the same text as the joined buffer's
 * `toString('utf8')`, without that buffer, and without a 70 ms stall for 34 MB.
 */
export async function textInSlices(chunks: readonly Buffer[]): Promise<{ text: string; bytes: number }> {
  const turns = new SliceTurns()
  let text = ''
  let bytes = 0
  for (const chunk of chunks) {
    const decoded = await decodeInSlices(chunk, 0, chunk.length, turns)
    text += decoded.text
    bytes += decoded.bytes
  }
  return { text, bytes }
}
