// A JSON object's top-level members found in its bytes, and the object with some members dropped or set, written as
// a copy of those bytes of the same length: a background create of megabytes becomes its upstream request without
// being serialised again (which took about four times the body in garbage) and without a byte of it changing but
// those members'.
import { stringAt } from './inspect.js'

/** One top-level member: its key's opening quote at `start`, its value from `valueStart` to just before `end`. */
export interface MemberSpan {
  /** The key, decoded; undefined for a key longer than `MAX_KEY_BYTES` (no member the gateway edits has one). */
  key: string | undefined
  start: number
  valueStart: number
  end: number
}

/** The top-level members of an object text, with where each comma between two of them lies. */
export interface TopMembers {
  members: MemberSpan[]
  /** `commas[i]` lies between `members[i]` and `members[i + 1]`. */
  commas: number[]
}

/** Keys longer than this are not decoded. */
const MAX_KEY_BYTES = 256
/** Bytes read between two turns of the event loop. */
const SLICE_BYTES = 256 * 1024

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/**
 * The index just past the string literal read from `from` (its opening quote, or an escaped quote inside it); or,
 * once it passed `limit` without finding the literal's end, `-1 - q` for the escaped quote `q` it got to: a string
 * full of escaped quotes is read over several turns, not in one.
 */
function stringEnd(bytes: Buffer, from: number, limit: number): number {
  let close = from
  for (;;) {
    close = bytes.indexOf(0x22, close + 1)
    if (close < 0) return bytes.length
    let backslashes = 0
    while (bytes[close - 1 - backslashes] === 0x5c) backslashes++
    if (backslashes % 2 === 0) return close + 1
    if (close > limit) return -1 - close
  }
}

const turn = () => new Promise(setImmediate)

/**
 * The top-level members of `bytes`, a JSON object text already checked against the grammar (no other input is
 * read right), found with a turn of the event loop after each 256 KiB.
 */
export async function topLevelMembers(bytes: Buffer): Promise<TopMembers> {
  const members: MemberSpan[] = []
  const commas: number[] = []
  let at = bytes.indexOf(0x7b) + 1
  let mark = at
  const skipSpace = () => {
    while (isSpace(bytes[at])) at++
  }
  // Past the string literal at `at`, with a turn after each slice of it.
  const skipString = async () => {
    for (let end = stringEnd(bytes, at, mark + SLICE_BYTES); ; end = stringEnd(bytes, mark, mark + SLICE_BYTES)) {
      if (end >= 0) {
        at = end
        return
      }
      mark = -1 - end
      await turn()
    }
  }
  for (;;) {
    skipSpace()
    if (bytes[at] !== 0x22) break
    const start = at
    await skipString()
    const key = at - start <= MAX_KEY_BYTES ? stringAt(bytes, start, at) : undefined
    skipSpace()
    at++ // the colon
    skipSpace()
    const valueStart = at
    const c = bytes[at]
    if (c === 0x22) await skipString()
    else if (c === 0x7b || c === 0x5b) {
      let depth = 0
      do {
        const d = bytes[at]
        if (d === 0x22) {
          await skipString()
          continue
        }
        if (d === 0x7b || d === 0x5b) depth++
        else if (d === 0x7d || d === 0x5d) depth--
        at++
        if (at - mark >= SLICE_BYTES) {
          mark = at
          await turn()
        }
      } while (depth > 0 && at < bytes.length)
    } else {
      while (at < bytes.length && bytes[at] !== 0x2c && bytes[at] !== 0x7d && !isSpace(bytes[at])) at++
    }
    members.push({ key, start, valueStart, end: at })
    skipSpace()
    if (bytes[at] !== 0x2c) break
    commas.push(at++)
  }
  return { members, commas }
}

/** A JSON literal a member may be set to. */
export type JsonLiteral = string | number | boolean | null

/** Members to take out of an object and members to set in it. */
export interface MemberEdits {
  drop: readonly string[]
  set: Readonly<Record<string, JsonLiteral>>
}

/**
 * `bytes` (a checked JSON object text) with `edits` made, as a copy of the same length (or in `bytes` themselves,
 * `inPlace`, for bytes nobody else holds): dropped members and the commas they leave are blanked, a set member's
 * value is written in its place (its earlier duplicates dropped), a member set but absent takes a dropped member's
 * place. Spaces pad what is shorter. Undefined when a written text does not fit where it goes: the caller then writes
 * the edited object whole. `found`: the members, when read already.
 */
export async function editTopLevelMembers(
  bytes: Buffer,
  edits: MemberEdits,
  inPlace = false,
  found?: TopMembers,
): Promise<Buffer | undefined> {
  const { members, commas } = found ?? (await topLevelMembers(bytes))
  const writes: Array<[number, number, string]> = []
  const kept = members.map(() => true)
  const freed: number[] = []
  const lastOf = new Map<string, number>()
  members.forEach((member, i) => {
    if (member.key !== undefined) lastOf.set(member.key, i)
  })
  members.forEach((member, i) => {
    if (member.key === undefined) return
    if (edits.drop.includes(member.key) || (Object.hasOwn(edits.set, member.key) && lastOf.get(member.key) !== i)) {
      kept[i] = false
      freed.push(i)
    }
  })
  for (const [key, value] of Object.entries(edits.set)) {
    const text = JSON.stringify(value)
    // Fitted in bytes: a string value or key may hold characters of several bytes.
    const at = lastOf.get(key)
    if (at !== undefined) {
      const member = members[at] as MemberSpan
      if (Buffer.byteLength(text) > member.end - member.valueStart) return undefined
      writes.push([member.valueStart, member.end, text])
      continue
    }
    const slot = freed.find((i) => {
      const member = members[i] as MemberSpan
      return member.end - member.start >= Buffer.byteLength(`${JSON.stringify(key)}:${text}`)
    })
    if (slot === undefined) return undefined
    freed.splice(freed.indexOf(slot), 1)
    kept[slot] = true
    const member = members[slot] as MemberSpan
    writes.push([member.start, member.end, `${JSON.stringify(key)}:${text}`])
  }
  const out = inPlace ? bytes : Buffer.from(bytes)
  for (const i of freed) out.fill(0x20, (members[i] as MemberSpan).start, (members[i] as MemberSpan).end)
  for (const [from, to, text] of writes) {
    out.fill(0x20, from, to)
    out.write(text, from, 'utf8')
  }
  // Exactly one comma between two kept members, the last of those between them; none before the first or after the last.
  const blankCommas = (from: number, to: number) => {
    for (let c = from; c < to; c++) out[commas[c] as number] = 0x20
  }
  let previous = -1
  kept.forEach((keep, i) => {
    if (!keep) return
    blankCommas(previous < 0 ? 0 : previous, previous < 0 ? i : i - 1)
    previous = i
  })
  blankCommas(previous < 0 ? 0 : previous, commas.length)
  return out
}

/** `object` with `edits` made, as a new object (`editTopLevelMembers` for a parsed one). */
export function editMembers(object: Record<string, unknown>, edits: MemberEdits): Record<string, unknown> {
  const edited = { ...object }
  for (const key of edits.drop) delete edited[key]
  return Object.assign(edited, edits.set)
}
