// The skeleton half of the body scanner: json-scan.ts checks the grammar byte by byte and reports where each value
// at levels 0..3 of an object body begins and ends; this module alone decides what of those values to keep.

/**
 * Stands in for a string value too big to keep in a skeleton (see `scanJsonObject`). Only its type is faithful:
 * it is a non-empty string, as the string it replaces was.
 */
export const BIG_STRING = '\u0000big'

import { invalidField, shown } from '../errors.js'
import { duplicateKey, stringAt } from './inspect.js'
import { numberAt, numberScratch } from './number.js'

/** Key spans beyond this (or beyond smallValueBytes if larger) are left out: no field the gateway validates has such a name. */
const MAX_KEY_BYTES = 64 * 1024

/** A run of small children is parsed once it spans this many bytes, so no parse call is long. */
const RUN_BYTES = 64 * 1024

/** Marks a member that a skeleton object leaves out. */
const LEFT_OUT: unique symbol = Symbol('left out')

/**
 * What stands for an element member's value in an element summary, by the kind of its first byte: only its type is
 * faithful. Index 0 is "absent".
 */
const STAND_INS: readonly (() => unknown)[] = [
  () => undefined,
  () => '',
  () => ({}),
  () => [],
  () => 0,
  () => true,
  () => false,
  () => null,
]

/** The STAND_INS index of a value from its first byte. */
function kindOf(c: number | undefined): number {
  switch (c) {
    case 0x22:
      return 1
    case 0x7b:
      return 2
    case 0x5b:
      return 3
    case 0x74:
      return 5
    case 0x66:
      return 6
    case 0x6e:
      return 7
    default:
      return 4
  }
}

type Skeleton = unknown[] | Record<string, unknown>

/**
 * A container whose skeleton may be needed: the top-level object (level 0), or a top-level member's array or object
 * (level 1). Consecutive children whose values are small form a
 * run, parsed in one JSON.parse call (the text from the first child, or its key, to the last child's end, wrapped
 * in brackets) when a big child comes, when the run grows past RUN_BYTES, or when the container ends. While the
 * container is not known to be big (`built` null), its run holds all its children and it may yet be parsed whole.
 */
class Frame {
  active = false
  start = 0
  isArray = false
  built: Skeleton | null = null
  runStart = -1
  runEnd = 0
}

function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  // Plain assignment of '__proto__' would set the prototype; JSON.parse makes it an own property, so must we.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * Builds the skeleton of a valid object body (see `scanJsonObject`) from the value boundaries its scanner reports,
 * in text order; reads only the bytes of values it keeps or measures, never scans.
 */
export class SkeletonBuilder {
  /** Per level 1..3: where the current value and its key begin, and where the key ends. */
  private readonly valueStart = [0, 0, 0, 0]
  private readonly keyStart = [0, 0, 0, 0]
  private readonly keyEnd = [0, 0, 0, 0]
  private readonly frames = [new Frame(), new Frame()]
  private readonly digits = numberScratch()
  private readonly maxKey: number
  /** `elementFields` as the quoted key bytes a member's key span is compared with. */
  private readonly elementKeys: Buffer[]
  /** Per element field, the STAND_INS index of its last value in the current element (0: absent). */
  private readonly elementKinds: Uint8Array
  /** Whether the value at level 2 is an object element of a top-level array (its members are noted). */
  private inElement = false
  /** One summary object per combination of element field kinds: elements share them, none is built per element. */
  private readonly summaries = new Map<number, Readonly<Record<string, unknown>>>()

  constructor(
    private readonly bytes: Buffer,
    private readonly small: number,
    /** Top-level members whose string value is read as such (`model`): too big to keep is refused, never stood in for. */
    private readonly exactStrings: ReadonlySet<string> = new Set(),
    /** Top-level members that may appear once (the fields the gateway reads). */
    private readonly singleKeys: ReadonlySet<string> = new Set(),
    /** Members of object elements of top-level arrays that validation reads the type of (`messages[i].role`). */
    private readonly elementFields: readonly string[] = [],
  ) {
    this.maxKey = Math.max(MAX_KEY_BYTES, small)
    this.elementKeys = elementFields.map((name) => Buffer.from(JSON.stringify(name), 'utf8'))
    this.elementKinds = new Uint8Array(elementFields.length)
    const top = this.frames[0] as Frame
    top.active = true
    top.built = {}
    top.isArray = false
  }

  /**
   * A value begins at `level` (1..3) of an object body, at byte `at`; its key spans [keyStart, keyEnd), quotes
   * included, when its container is an object (otherwise the key arguments are stale and ignored).
   */
  onStart(level: number, at: number, keyStart: number, keyEnd: number): void {
    this.valueStart[level] = at
    this.keyStart[level] = keyStart
    this.keyEnd[level] = keyEnd
    const c = this.bytes[at]
    if (level === 1) {
      if (this.singleKeys.size > 0) this.noteMember(keyStart, keyEnd)
      if (c !== 0x7b && c !== 0x5b) return
      const frame = this.frames[1] as Frame
      frame.active = true
      frame.start = at
      frame.isArray = c === 0x5b
      frame.built = null
      frame.runStart = -1
    } else if (level === 2) {
      this.inElement = c === 0x7b && (this.frames[1] as Frame).isArray
      if (this.inElement) this.elementKinds.fill(0)
    } else if (this.inElement) {
      this.noteElementMember(at, keyStart, keyEnd)
    }
  }

  /** A value at `level` (0..3) of an object body ends just before `end`. */
  onEnd(level: number, end: number): void {
    if (level === 0 || level === 3) return
    const parent = this.frames[level - 1] as Frame
    if (!parent.active) return
    const start = this.valueStart[level] as number
    if (level === 1 && this.exactStrings.size > 0 && this.bytes[start] === 0x22) this.noteSpan(start, end)
    const span = end - start
    if (level === 1 && span > this.small) {
      const c = this.bytes[start]
      const frame = this.frames[1] as Frame
      if (c === 0x7b || c === 0x5b) {
        if (frame.built === null) frame.built = frame.isArray ? [] : {}
        this.flush(frame)
      }
    }
    // The parent spans at least up to its closing bracket, just after this child at the earliest.
    if (parent.built === null && end + 1 - parent.start > this.small) parent.built = parent.isArray ? [] : {}
    if (level === 2 && this.inElement) {
      this.inElement = false
      // An element of an array known to be big is summed up: parsing each of them would cost what the scan saves.
      if (parent.built !== null) {
        this.flush(parent)
        ;(parent.built as unknown[]).push(this.summary())
        return
      }
    }
    const keyStart = this.keyStart[level] as number
    const longKey = !parent.isArray && (this.keyEnd[level] as number) - keyStart > this.maxKey
    if (span <= this.small && !longKey) {
      if (parent.runStart < 0) parent.runStart = parent.isArray ? start : keyStart
      parent.runEnd = end
      if (parent.built !== null && end - parent.runStart > RUN_BYTES) this.flush(parent)
      return
    }
    // A big child makes the parent big; a member with a long key is left out and forces the run to be cut.
    if (parent.built === null) parent.built = parent.isArray ? [] : {}
    this.flush(parent)
    if (longKey) return
    if (level === 1 && this.bytes[start] === 0x22 && this.exactStrings.size > 0) {
      const key = this.keyOf(keyStart, this.keyEnd[level] as number)
      if (this.exactStrings.has(key)) throw invalidField(key, `'${shown(key)}' is longer than ${this.small} bytes.`)
    }
    const value = this.bigValue(level, parent.isArray, start, end)
    if (parent.isArray) {
      ;(parent.built as unknown[]).push(value)
      return
    }
    const key = this.keyOf(keyStart, this.keyEnd[level] as number)
    const target = parent.built as Record<string, unknown>
    // The last duplicate wins, as with JSON.parse: a left-out value also removes an earlier one.
    if (value === LEFT_OUT) delete target[key]
    else defineMember(target, key, value)
  }

  /** Notes the kind of an element member's value when its key is one of `elementFields` (the last duplicate wins). */
  private noteElementMember(at: number, keyStart: number, keyEnd: number): void {
    const keys = this.elementKeys
    const length = keyEnd - keyStart
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k] as Buffer
      if (length === key.length ? this.sameBytes(key, keyStart) : this.escapedName(keyStart, keyEnd, k)) {
        this.elementKinds[k] = kindOf(this.bytes[at])
      }
    }
  }

  private sameBytes(key: Buffer, at: number): boolean {
    const b = this.bytes
    for (let j = 0; j < key.length; j++) if (b[at + j] !== key[j]) return false
    return true
  }

  /** Whether a key written with escapes (`"\u0072ole"`) is element field `k`: rare, so decoded only when it can be. */
  private escapedName(keyStart: number, keyEnd: number, k: number): boolean {
    const name = this.elementFields[k] as string
    // Each character is at most a six-byte escape; a longer key cannot be this name.
    if (keyEnd - keyStart < name.length + 2 || keyEnd - keyStart > 6 * name.length + 2) return false
    const b = this.bytes
    let escaped = false
    for (let j = keyStart + 1; j < keyEnd - 1; j++) if (b[j] === 0x5c) escaped = true
    return escaped && this.keyOf(keyStart, keyEnd) === name
  }

  /** The shared summary of the element just ended: its `elementFields` members, each a stand-in of its type. */
  private summary(): Readonly<Record<string, unknown>> {
    const kinds = this.elementKinds
    let id = 0
    for (let k = 0; k < kinds.length; k++) id = id * 8 + (kinds[k] as number)
    let found = this.summaries.get(id)
    if (found === undefined) {
      const built: Record<string, unknown> = {}
      for (let k = 0; k < kinds.length; k++) {
        if (kinds[k] !== 0) defineMember(built, this.elementFields[k] as string, (STAND_INS[kinds[k] as number] as () => unknown)())
      }
      found = Object.freeze(built)
      this.summaries.set(id, found)
    }
    return found
  }

  private seen: Set<string> | undefined
  /** Where each exact top-level string lies, quotes included. */
  readonly spans = new Map<string, readonly [number, number]>()

  private noteSpan(start: number, end: number): void {
    const keyStart = this.keyStart[1] as number
    const keyEnd = this.keyEnd[1] as number
    if (keyEnd - keyStart > 256) return
    const key = this.keyOf(keyStart, keyEnd)
    if (this.exactStrings.has(key)) this.spans.set(key, [start, end])
  }

  /** Refuses a second occurrence of a top-level member the gateway reads. */
  private noteMember(keyStart: number, keyEnd: number): void {
    // Field names the gateway reads are short, even fully escaped: a longer key cannot be one of them.
    if (keyEnd - keyStart > 256) return
    const key = this.keyOf(keyStart, keyEnd)
    if (!this.singleKeys.has(key)) return
    this.seen ??= new Set()
    if (this.seen.has(key)) throw duplicateKey(key)
    this.seen.add(key)
  }

  /** The skeleton, once the whole body has been reported and found to be a valid object. */
  finish(): Record<string, unknown> {
    const top = this.frames[0] as Frame
    this.flush(top)
    return top.built as Record<string, unknown>
  }

  /** Parses the frame's run of small children into its skeleton. */
  private flush(frame: Frame): void {
    if (frame.runStart < 0) return
    const text = this.bytes.toString('utf8', frame.runStart, frame.runEnd)
    frame.runStart = -1
    if (frame.isArray) {
      const values = JSON.parse(`[${text}]`) as unknown[]
      const target = frame.built as unknown[]
      for (let k = 0; k < values.length; k++) target.push(values[k])
    } else {
      const members = JSON.parse(`{${text}}`) as Record<string, unknown>
      const target = frame.built as Record<string, unknown>
      for (const key of Object.keys(members)) defineMember(target, key, members[key])
    }
  }

  /** What stands for the big value spanning [start, end) at `level` in a skeleton. */
  private bigValue(level: number, inArray: boolean, start: number, end: number): unknown {
    const c = this.bytes[start]
    if (c === 0x22) return BIG_STRING
    if (c === 0x7b || c === 0x5b) {
      if (level === 1) return (this.frames[1] as Frame).built
      return inArray ? [] : LEFT_OUT
    }
    // Literals are never big (the threshold is at least 5 bytes): this is a number.
    return numberAt(this.bytes, start, end, this.digits)
  }

  /** The key spanning [start, end), quotes included. */
  private keyOf(start: number, end: number): string {
    return stringAt(this.bytes, start, end)
  }
}
