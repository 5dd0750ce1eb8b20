import type { createHash as CreateHash } from 'node:crypto'
import type { CanonicalOutput, Out, Piece } from './canonical-out.js'

/** One hashing in progress over a body's bytes, advanced a slice at a time (see `canonicalByteHashing`). */
export interface ByteHashJob {
  /** Does about `budget` bytes of work (at least one token); true once the hash is ready. Throws on a body that is not JSON. */
  step(budget: number): boolean
  /** The request_body_hash, once `step` returned true. */
  result(): string
}

/**
 * The request_body_hash of SPEC 4.3 computed from a body's bytes in one linear pass, without parsing it into
 * objects: the canonical form is built as bytes (strings and numbers copied as they are when already canonical,
 * big ones as views of the body, never copied), each object's members sorted when it closes. Memory is about the
 * body's size whatever its shape, where `JSON.parse` of a body of a million `{}` holds a JavaScript object each.
 * The work is cut into slices (`step`), so a scheduler can interleave jobs and no body holds the thread.
 *
 * Self-contained like `canonicalHashing` (refers to nothing outside itself but the `Buffer` global and the
 * writers it is given, `canonicalOutput()`), so the hash worker runs the very same code from its source. The result
 * equals `requestBodyHash` of the same bytes.
 */
export function canonicalByteHashing({ createHash, output }: { createHash: typeof CreateHash; output: CanonicalOutput }) {
  const { newOut, writeByte, writeText, writeSpan, writePiece } = output
  // At most this many bytes go to the hash in one update.
  const DIGEST_SLICE = 1 << 20
  // Integers of at most this many digits are their own canonical form (a double holds them exactly).
  const PLAIN_DIGITS = 15

  /**
   * One open container. Arrays write straight into `out`. Objects gather members and sort them when they close:
   * `spans` holds four numbers a member (key start and end, value start and end, -1 when the value is in
   * `pieces`), `names` the decoded key of a member whose raw bytes do not sort as its UTF-16 text does.
   */
  interface Frame {
    array: boolean
    out: Out | undefined
    count: number
    spans: number[]
    pieces: (Piece | undefined)[]
    names: (string | undefined)[]
    order: number[]
    keyStart: number
    keyEnd: number
    keyName: string | undefined
  }

  function notJson(at: number, what: string): SyntaxError {
    return new SyntaxError(`${what} at position ${at}`)
  }

  /** Starts hashing `bytes`, a UTF-8 JSON text. */
  function start(bytes: Uint8Array): ByteHashJob {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const n = b.length
    const frames: Frame[] = []
    let depth = 0
    let i = 0
    // 0 a value, 1 a comma or a close, 2 a key, 3 a colon, 4 nothing more.
    let expect = 0
    // Right after an opening bracket, where a close is allowed in place of a value or key.
    let opened = false
    let root: Piece | undefined
    let digest: { hash: ReturnType<typeof createHash>; parts: Uint8Array[]; at: number } | undefined
    let hash = ''
    // What the last string scanned held: an escape, a byte from 0xEE on (UTF-8 of U+E000 and above, where byte
    // order and UTF-16 order part).
    let escaped = false
    let high = false

    function frame(array: boolean): Frame {
      let f = frames[depth]
      if (f === undefined) {
        f = { array, out: undefined, count: 0, spans: [], pieces: [], names: [], order: [], keyStart: 0, keyEnd: 0, keyName: undefined }
        frames[depth] = f
      }
      f.array = array
      f.count = 0
      return f
    }

    /** Where a value that starts now is written when it is an array's element: the array's out, after a comma. */
    function elementOut(): Out | undefined {
      if (depth === 0) return undefined
      const parent = frames[depth - 1] as Frame
      if (!parent.array) return undefined
      if (parent.count++ > 0) writeByte(parent.out as Out, 0x2c)
      return parent.out
    }

    /** A finished value that was not written into an array: a member of the object above, or the whole body. */
    function place(piece: Piece | undefined, start: number, end: number): void {
      if (depth === 0) {
        root = piece ?? b.subarray(start, end)
        return
      }
      const parent = frames[depth - 1] as Frame
      // Written by index, never emptied: a frame's arrays keep their size for the next object at its depth.
      const member = parent.count++
      const spans = parent.spans
      spans[4 * member] = parent.keyStart
      spans[4 * member + 1] = parent.keyEnd
      spans[4 * member + 2] = piece === undefined ? start : -1
      spans[4 * member + 3] = end
      parent.pieces[member] = piece
      parent.names[member] = parent.keyName
    }

    /** A scalar value: the span [start, end) of the body when it is canonical as it is, else its canonical text. */
    function scalar(text: string | undefined, start: number, end: number): void {
      const out = elementOut()
      if (out === undefined) place(text, start, end)
      else if (text === undefined) writeSpan(out, b, start, end)
      else writeText(out, text)
      expect = depth === 0 ? 4 : 1
    }

    /** The end of the string token at `from`, noting whether it holds an escape or high bytes. */
    function stringEnd(from: number): number {
      let close = b.indexOf(0x22, from + 1)
      for (;;) {
        if (close === -1) throw notJson(from, 'Unterminated string in JSON')
        let k = close - 1
        while (b[k] === 0x5c) k--
        if ((close - 1 - k) % 2 === 0) break
        close = b.indexOf(0x22, close + 1)
      }
      escaped = false
      high = false
      for (let k = from + 1; k < close; k++) {
        const c = b[k] as number
        if (c < 0x20) throw notJson(k, 'Bad control character in string literal in JSON')
        if (c === 0x5c) escaped = true
        else if (c >= 0xee) high = true
      }
      return close + 1
    }

    /** The end of the number token at `from`, checked against the JSON grammar. */
    function numberEnd(from: number): number {
      let k = from
      if (b[k] === 0x2d) k++
      if (b[k] === 0x30) k++
      else k = digitsEnd(k)
      if (b[k] === 0x2e) k = digitsEnd(k + 1)
      if (((b[k] as number) | 0x20) === 0x65) {
        k++
        if (b[k] === 0x2b || b[k] === 0x2d) k++
        k = digitsEnd(k)
      }
      return k
    }

    /** The end of one or more digits at `k`. */
    function digitsEnd(k: number): number {
      if (!((b[k] as number) >= 0x30 && (b[k] as number) <= 0x39)) throw notJson(k, 'No number after minus sign in JSON')
      let end = k + 1
      while ((b[end] as number) >= 0x30 && (b[end] as number) <= 0x39) end++
      return end
    }

    function number(): void {
      const start = i
      const end = numberEnd(start)
      i = end
      const sign = b[start] === 0x2d ? 1 : 0
      let plain = end - start - sign <= PLAIN_DIGITS && !(sign === 1 && b[start + 1] === 0x30)
      for (let k = start + sign; plain && k < end; k++) plain = (b[k] as number) <= 0x39 && (b[k] as number) >= 0x30
      if (plain) scalar(undefined, start, end)
      else {
        const value = Number(b.toString('latin1', start, end))
        scalar(Number.isFinite(value) ? String(value) : 'null', start, end)
      }
    }

    function literal(word: string): void {
      for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) throw notJson(i + k, 'Unexpected token in JSON')
      i += word.length
      scalar(undefined, i - word.length, i)
    }

    function open(array: boolean): void {
      const out = elementOut()
      const f = frame(array)
      if (array) {
        f.out = out ?? newOut()
        writeByte(f.out, 0x5b)
      } else f.out = out
      depth++
      i++
      expect = array ? 0 : 2
      opened = true
    }

    function close(array: boolean): void {
      const f = frames[depth - 1] as Frame
      if (f.array !== array) throw notJson(i, 'Unexpected token in JSON')
      i++
      depth--
      let piece: Piece | undefined
      if (array) {
        writeByte(f.out as Out, 0x5d)
        // An array inside an array was written into its parent's out: nothing left to place.
        if (!(depth > 0 && (frames[depth - 1] as Frame).array)) piece = f.out as Out
      } else {
        const out = f.out ?? newOut()
        writeMembers(out, f)
        if (f.out === undefined) piece = out
      }
      f.out = undefined
      if (piece !== undefined) place(piece, 0, 0)
      expect = depth === 0 ? 4 : 1
    }

    /** The key of member `m` as text, for members whose bytes do not sort as their text does. */
    function keyText(f: Frame, m: number): string {
      return f.names[m] ?? b.toString('utf8', (f.spans[4 * m] as number) + 1, (f.spans[4 * m + 1] as number) - 1)
    }

    /** Orders members by key: UTF-16 code units (RFC 8785), compared on the raw bytes where they agree. */
    function compareKeys(f: Frame, x: number, y: number): number {
      if (f.names[x] === undefined && f.names[y] === undefined) {
        const s = f.spans
        // Within the quotes: a closing quote must not sort as a character.
        let p = (s[4 * x] as number) + 1
        const pe = (s[4 * x + 1] as number) - 1
        let q = (s[4 * y] as number) + 1
        const qe = (s[4 * y + 1] as number) - 1
        for (; p < pe && q < qe; p++, q++) {
          if (b[p] !== b[q]) return (b[p] as number) - (b[q] as number)
        }
        return pe - p - (qe - q)
      }
      const kx = keyText(f, x)
      const ky = keyText(f, y)
      return kx === ky ? 0 : kx < ky ? -1 : 1
    }

    /** `{` members sorted by key, the last of equal keys winning as with JSON.parse, `}`. */
    function writeMembers(out: Out, f: Frame): void {
      const count = f.count
      const { spans, pieces, names, order } = f
      writeByte(out, 0x7b)
      for (let k = 0; k < count; k++) order[k] = k
      // Members are few and often sorted already: insertion sort, stable so the last duplicate stays last.
      if (count <= 16) {
        for (let k = 1; k < count; k++) {
          const m = order[k] as number
          let j = k - 1
          while (j >= 0 && compareKeys(f, order[j] as number, m) > 0) {
            order[j + 1] = order[j] as number
            j--
          }
          order[j + 1] = m
        }
      } else {
        const sorted = order.slice(0, count).sort((x, y) => compareKeys(f, x, y) || x - y)
        for (let k = 0; k < count; k++) order[k] = sorted[k] as number
      }
      let first = true
      for (let k = 0; k < count; k++) {
        const m = order[k] as number
        if (k + 1 < count && compareKeys(f, m, order[k + 1] as number) === 0) continue
        if (!first) writeByte(out, 0x2c)
        first = false
        const name = names[m]
        if (name === undefined) writeSpan(out, b, spans[4 * m] as number, spans[4 * m + 1] as number)
        else writeText(out, JSON.stringify(name))
        writeByte(out, 0x3a)
        const start = spans[4 * m + 2] as number
        if (start === -1) writePiece(out, pieces[m] as Piece)
        else writeSpan(out, b, start, spans[4 * m + 3] as number)
      }
      writeByte(out, 0x7d)
      // Built values are let go as soon as they are written.
      for (let k = 0; k < count; k++) if (pieces[k] !== undefined) pieces[k] = undefined
    }

    function token(): void {
      const c = b[i] as number
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        i++
        return
      }
      const wasOpened = opened
      opened = false
      switch (expect) {
        case 0:
          if (c === 0x22) {
            const start = i
            i = stringEnd(start)
            scalar(escaped ? JSON.stringify(JSON.parse(b.toString('utf8', start, i)) as string) : undefined, start, i)
          } else if (c === 0x7b) open(false)
          else if (c === 0x5b) open(true)
          else if (c === 0x5d && wasOpened) close(true)
          else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) number()
          else if (c === 0x74) literal('true')
          else if (c === 0x66) literal('false')
          else if (c === 0x6e) literal('null')
          else throw notJson(i, 'Unexpected token in JSON')
          return
        case 1:
          if (c === 0x2c) {
            i++
            expect = (frames[depth - 1] as Frame).array ? 0 : 2
          } else if (c === 0x5d || c === 0x7d) close(c === 0x5d)
          else throw notJson(i, 'Unexpected token in JSON')
          return
        case 2:
          if (c === 0x22) {
            const f = frames[depth - 1] as Frame
            f.keyStart = i
            i = stringEnd(i)
            f.keyEnd = i
            f.keyName = escaped || high ? (JSON.parse(b.toString('utf8', f.keyStart, i)) as string) : undefined
            expect = 3
          } else if (c === 0x7d && wasOpened) close(false)
          else throw notJson(i, 'Expected property name in JSON')
          return
        case 3:
          if (c !== 0x3a) throw notJson(i, "Expected ':' after property name in JSON")
          i++
          expect = 0
          return
        default:
          throw notJson(i, 'Unexpected non-whitespace character after JSON')
      }
    }

    function startDigest(): void {
      const whole = root as Piece
      const parts: Uint8Array[] =
        typeof whole === 'string'
          ? [Buffer.from(whole)]
          : Buffer.isBuffer(whole)
            ? [whole]
            : [...whole.parts, whole.stage.subarray(0, whole.used)]
      digest = { hash: createHash('sha256'), parts, at: 0 }
    }

    return {
      step(budget: number): boolean {
        if (hash !== '') return true
        if (digest === undefined) {
          const end = Math.min(n, i + Math.max(1, budget))
          while (i < end) token()
          if (i < n) return false
          if (expect !== 4) throw notJson(n, 'Unexpected end of JSON input')
          startDigest()
          return false
        }
        const d = digest
        let spent = 0
        while (d.at < d.parts.length && spent < budget) {
          const part = d.parts[d.at] as Uint8Array
          const take = Math.min(part.length, DIGEST_SLICE, Math.max(1, budget - spent))
          d.hash.update(part.subarray(0, take))
          spent += take
          if (take === part.length) d.at++
          else d.parts[d.at] = part.subarray(take)
        }
        if (d.at < d.parts.length) return false
        hash = d.hash.digest('hex').slice(0, 16)
        return true
      },
      result(): string {
        return hash
      },
    }
  }

  return { start }
}
