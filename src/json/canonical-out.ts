// The output side of the byte hasher (canonical-bytes.ts): canonical bytes built into staged buffers and views.

/** Canonical bytes being built: finished parts (big ones views of the body) and a staging buffer. */
export interface Out {
  parts: Buffer[]
  stage: Buffer
  used: number
}

/** A finished value that is not a span of the body: canonical text, a view of the body, or built bytes. */
export type Piece = string | Buffer | Out

/** What `canonicalOutput` gives: the writers of an `Out`. */
export type CanonicalOutput = ReturnType<typeof canonicalOutput>

/**
 * The writers of canonical bytes. Self-contained (nothing outside itself but the `Buffer` global), so the hash
 * worker runs it from its source, as it does `canonicalByteHashing`.
 */
export function canonicalOutput() {
  // A span at least this long is kept as a view of its buffer instead of a copy.
  const VIEW_FROM = 4096
  // Output staged in one buffer until it holds this much, then moved to the part list.
  const STAGE_BYTES = 65536

  function newOut(): Out {
    return { parts: [], stage: Buffer.allocUnsafe(64), used: 0 }
  }

  function room(out: Out, bytes: number): void {
    if (out.used + bytes <= out.stage.length) return
    if (out.used + bytes <= STAGE_BYTES) {
      const bigger = Buffer.allocUnsafe(Math.min(STAGE_BYTES, Math.max(out.stage.length * 2, out.used + bytes)))
      out.stage.copy(bigger, 0, 0, out.used)
      out.stage = bigger
      return
    }
    if (out.used > 0) out.parts.push(out.stage.subarray(0, out.used))
    out.stage = Buffer.allocUnsafe(Math.max(STAGE_BYTES, bytes))
    out.used = 0
  }

  function writeByte(out: Out, byte: number): void {
    if (out.used === out.stage.length) room(out, 1)
    out.stage[out.used++] = byte
  }

  function writeText(out: Out, text: string): void {
    room(out, Buffer.byteLength(text))
    out.used += out.stage.write(text, out.used)
  }

  /** Copies `length` bytes of `from` at `start`, or refers to them when they are many. */
  function writeSpan(out: Out, from: Buffer, start: number, end: number): void {
    const length = end - start
    if (length >= VIEW_FROM) {
      if (out.used > 0) {
        out.parts.push(out.stage.subarray(0, out.used))
        out.stage = out.stage.subarray(out.used)
        out.used = 0
      }
      out.parts.push(from.subarray(start, end))
      return
    }
    room(out, length)
    const stage = out.stage
    let at = out.used
    if (length < 32) for (let k = start; k < end; k++) stage[at++] = from[k] as number
    else at += from.copy(stage, at, start, end)
    out.used = at
  }

  function writePiece(out: Out, piece: Piece): void {
    if (typeof piece === 'string') writeText(out, piece)
    else if (Buffer.isBuffer(piece)) writeSpan(out, piece, 0, piece.length)
    else {
      for (const part of piece.parts) writeSpan(out, part, 0, part.length)
      writeSpan(out, piece.stage, 0, piece.used)
    }
  }

  return { newOut, writeByte, writeText, writeSpan, writePiece }
}
