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

/** Where a UTF-8 window may end before `end` without cutting a character: before a byte that starts one. */
function characterEdge(chunk: Buffer, from: number, end: number): number {
  if (end >= chunk.length) return chunk.length
  // A character is at most four bytes: past three continuation bytes, the bytes are stray and decode one by one.
  for (let at = end; at > from && at > end - 4; at--) if (((chunk[at] as number) & 0xc0) !== 0x80) return at
  return end
}

/**
 * The UTF-8 text of `chunks` (each ending on a character boundary, as whole SSE events do) and its size in bytes as
 * text (invalid bytes decoded as U+FFFD), decoded a slice at a time with a turn of the event loop between slices: the
 * same text as the joined buffer's `toString('utf8')`, without that buffer, and without a 70 ms stall for 34 MB.
 */
export async function textInSlices(chunks: readonly Buffer[]): Promise<{ text: string; bytes: number }> {
  let text = ''
  let bytes = 0
  let sinceTurn = 0
  for (const chunk of chunks) {
    for (let from = 0; from < chunk.length; ) {
      const end = characterEdge(chunk, from, from + Math.max(4, SLICE_BYTES - sinceTurn))
      const piece = chunk.toString('utf8', from, end)
      text += piece
      bytes += Buffer.byteLength(piece, 'utf8')
      sinceTurn += end - from
      from = end
      if (sinceTurn >= SLICE_BYTES) {
        await new Promise(setImmediate)
        sinceTurn = 0
      }
    }
  }
  return { text, bytes }
}
