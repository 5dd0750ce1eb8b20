import { getRandomValues } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { Dialect } from '../dialects/index.js'

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const RANDOM_CHARS = 16

/** Request ids are ULIDs: 26 Crockford base32 characters, URL-safe and sortable by creation time. */
export const REQUEST_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/

let lastTime = -1

/**
 * The characters of the id being made, as codes: one flat string is made of them at once. Added up piece by piece, an
 * id was a rope of 17 strings that every header check (a regular expression) flattened again. Typed arrays, not
 * arrays of numbers: their loads and stores skip the element-kind and hole checks an id paid 26 times.
 */
const idCodes = new Uint8Array(10 + RANDOM_CHARS)
const ALPHABET_CODES = Uint8Array.from(ALPHABET, (char) => char.charCodeAt(0))
/** The base-32 digit of each character code of the alphabet: an increment reads the digits from the id itself. */
const DIGIT_OF = new Uint8Array(128)
for (let digit = 0; digit < 32; digit++) DIGIT_OF[ALPHABET_CODES[digit] as number] = digit

/** 2^25: a time in ms is split in two halves of 25 bits, each a small integer. */
const HALF = 33554432

/**
 * Writes `ms` as the id's first ten characters over those of `previous`, the time written last. Only the last two
 * change within 1024 ms, so the rest is written only when they would change. In two halves of small integers: `%`
 * and division of a time in ms (past 2^31) are double arithmetic, whose remainder is a call into the runtime, ten of
 * them per id.
 */
function encodeTime(ms: number, previous: number): void {
  const top = Math.floor(ms / 1024)
  const low10 = ms - top * 1024
  idCodes[9] = ALPHABET_CODES[low10 & 31] as number
  idCodes[8] = ALPHABET_CODES[low10 >>> 5] as number
  if (top === Math.floor(previous / 1024)) return
  let high = Math.floor(ms / HALF)
  let low = (ms - high * HALF) >>> 10
  for (let i = 7; i >= 5; i--) {
    idCodes[i] = ALPHABET_CODES[low & 31] as number
    low >>>= 5
  }
  for (let i = 4; i >= 0; i--) {
    idCodes[i] = ALPHABET_CODES[high & 31] as number
    high >>>= 5
  }
}

/** Random words for the ids' random parts: one system call per 256 ids instead of one per id. */
const WORDS_PER_ID = 3
const POOL_WORDS = WORDS_PER_ID * 256
const pool = new Uint32Array(POOL_WORDS)
let poolOffset = POOL_WORDS

/**
 * New random digits: sixteen of five bits from three random words (six digits of each), three reads of the pool
 * instead of sixteen.
 */
function freshRandom(): void {
  if (poolOffset === POOL_WORDS) {
    getRandomValues(pool)
    poolOffset = 0
  }
  let word = 0
  for (let i = 0; i < RANDOM_CHARS; i++) {
    if (i % 6 === 0) word = pool[poolOffset++] as number
    // The top bit of the first digit stays clear so increments within one millisecond never overflow.
    idCodes[10 + i] = ALPHABET_CODES[word & (i === 0 ? 15 : 31)] as number
    word >>>= 5
  }
}

function increment(): void {
  for (let i = 10 + RANDOM_CHARS - 1; i >= 10; i--) {
    const digit = DIGIT_OF[idCodes[i] as number] as number
    if (digit < 31) {
      idCodes[i] = ALPHABET_CODES[digit + 1] as number
      return
    }
    idCodes[i] = ALPHABET_CODES[0] as number
  }
  freshRandom()
}

/** A new request id; ids made in one process are strictly increasing, even within one millisecond. */
export function newRequestId(now = Date.now()): string {
  if (now <= lastTime) {
    increment()
  } else {
    // Every id of one millisecond shares its time, and a busy server makes many per millisecond.
    encodeTime(now, lastTime)
    lastTime = now
    freshRandom()
  }
  return idText(idCodes)
}

/**
 * The id's 26 codes as one flat string. Passed one by one, not spread: a spread call goes through the generic
 * apply path, which cost more than making the string.
 */
function idText(c: Uint8Array): string {
  // biome-ignore format: one argument per code, grouped as the id is (ten of time, sixteen of randomness).
  return String.fromCharCode(
    c[0] as number, c[1] as number, c[2] as number, c[3] as number, c[4] as number,
    c[5] as number, c[6] as number, c[7] as number, c[8] as number, c[9] as number,
    c[10] as number, c[11] as number, c[12] as number, c[13] as number, c[14] as number, c[15] as number,
    c[16] as number, c[17] as number, c[18] as number, c[19] as number, c[20] as number, c[21] as number,
    c[22] as number, c[23] as number, c[24] as number, c[25] as number,
  )
}

/**
 * Adds a request id to a response head's headers for a client of `dialect`: `x-request-id`, and the header its SDKs
 * read the id from where that is another (the Anthropic SDK's `request-id`).
 */
export function withRequestId<T extends Record<string, string | number>>(headers: T, dialect: Dialect, requestId: string): T {
  const record: Record<string, string | number> = headers
  record['x-request-id'] = requestId
  if (dialect.requestIdHeader !== undefined) record[dialect.requestIdHeader] = requestId
  return headers
}

/** Sets a request id on a response not written yet, as `withRequestId` names it; a later `writeHead` keeps it. */
export function setRequestId(res: ServerResponse, dialect: Dialect, requestId: string): void {
  res.setHeader('x-request-id', requestId)
  if (dialect.requestIdHeader !== undefined) res.setHeader(dialect.requestIdHeader, requestId)
}
