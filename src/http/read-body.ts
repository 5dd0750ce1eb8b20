import type { IncomingMessage } from 'node:http'
import { GatewayError } from '../errors.js'
import { containersAtMost, inspectJson, type JsonRules } from '../json/inspect.js'
import { ALL_ASCII, quickVerdict, settleVerdict } from '../json/inspect-wasm.js'
import { scanJsonBody } from '../json/scan-body.js'
import { invalidUtf8At, invalidUtf8AtInSlices } from '../json/utf8.js'
import type { PreparsedBody } from '../types.js'
import { overloaded, type Reservation } from './body-budget.js'
import { collectBody } from './collect-body.js'
import type { DeadlineSweeper } from './deadlines.js'

/** A request body as the gateway forwards and stores it. */
export interface RequestBody {
  /** The exact bytes to forward. */
  bytes: Buffer
  /** What validation reads: the parsed object, or for a large body a skeleton of it (see json-scan.ts). */
  fields: Record<string, unknown>
  /** The whole parsed object when it is at hand; a large body is never parsed whole on the request path. */
  value: Record<string, unknown> | undefined
  /** Where the exact top-level strings (`model`) lie in `bytes`, for a large body: rewritten in place, never decoded. */
  spans: ReadonlyMap<string, readonly [number, number]> | undefined
  /**
   * The gateway read `bytes` from the request itself, so nothing else holds them and they may be edited in place (a
   * background create's upstream request); a host parser's bytes are the host's. @default false
   */
  owned?: boolean
}

/**
 * Bodies from this size on are checked by a scanner that yields to the event loop between slices, instead of one
 * `JSON.parse` that would stall every other request for hundreds of milliseconds on a 20 MB body.
 */
export const SCAN_FROM_BYTES = 1024 * 1024

/**
 * A smaller body with more objects and arrays than this is scanned too: parsing it whole would stall the loop (a
 * body under 1 MiB of deep nesting: hundreds of milliseconds), and it is then hashed on the hash worker.
 */
export const SCAN_FROM_CONTAINERS = 32 * 1024

/** Top-level members whose value the gateway uses, not just checks: the scanner keeps them exactly or refuses. */
const EXACT_STRINGS = ['model']

/** Sorts what a host parser left on a request: bytes or text are the raw body, anything else a parsed value. */
export function hostBody(body: unknown, rawBody?: unknown): PreparsedBody | undefined {
  if (typeof rawBody === 'string' || Buffer.isBuffer(rawBody)) return { raw: rawBody, parsed: body }
  if (typeof body === 'string' || Buffer.isBuffer(body)) return { raw: body }
  return body === undefined ? undefined : { parsed: body }
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError('request_too_large', `Request body is larger than the limit of ${limit} bytes.`)
}

/** True when the content type is `application/json`, with or without parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false
  // What every SDK sends, checked before the general form's two string copies.
  if (value === 'application/json') return true
  const semicolon = value.indexOf(';')
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase()
  return type === 'application/json'
}

/** The bounds of reading one request body. */
export interface BodyLimits {
  /** Largest body accepted (413 past it). */
  maxBytes: number
  /** When the whole body must have arrived (408 past it). */
  deadline: DeadlineSweeper
  /** Deepest nesting allowed (`limits.maxJsonDepth`). */
  maxDepth: number
}

const NO_FIELDS: ReadonlySet<string> = new Set()

/** What a caller brings to one body read besides the request. */
export interface BodyRead {
  /** A body the host framework already read, if any. */
  preparsed: PreparsedBody | undefined
  /** Top-level members the caller reads: refused when repeated. @default none */
  readFields?: ReadonlySet<string>
  /** Members of the elements of top-level arrays whose type the caller reads (`OperationFormat.elementFields`). @default none */
  elementFields?: readonly string[]
  /**
   * Whether the caller reads the body's members at all. A lookup only hashes the bytes: a large body is then
   * checked without building what validation would read. @default true
   */
  readsMembers?: boolean
  /** Counts a streamed body against the body budget as its memory is taken (what a host parser kept is reserved before). */
  reservation?: Reservation
}

/**
 * Reads a JSON request body: 415 unless it is declared `application/json`, then as `obtainBody`. `readFields` are
 * the top-level members the caller reads, refused when repeated.
 */
export function readJsonBody(req: IncomingMessage, limits: BodyLimits, read: BodyRead): Promise<RequestBody> {
  if (!isJsonContentType(req.headers['content-type'])) {
    return Promise.reject(new GatewayError('unsupported_media_type', "Content-Type must be 'application/json'."))
  }
  return obtainBody(req, limits, read)
}

/**
 * The bytes of a request body already in memory before the gateway reads it (what a host parser kept), or a 413
 * when the declared length is too large. A body still to stream counts 0: its bytes are counted as they arrive, since
 * reserving a declared length would let connections that never send it hold the budget.
 */
export function bytesHeldBeforeReading(req: IncomingMessage, read: BodyRead, limits: BodyLimits): number {
  if (read.preparsed?.raw !== undefined) return Buffer.byteLength(read.preparsed.raw)
  const declared = declaredLength(req.headers['content-length'])
  if (!Number.isSafeInteger(declared) || declared < 0) return 0
  if (declared > limits.maxBytes) throw tooLarge(limits.maxBytes)
  // A host parser that read the stream kept its value, re-serialised to about the declared size.
  return req.readableEnded ? declared : 0
}

/**
 * A request's declared `content-length` as `Number()` reads it (NaN when there is none). The digits node:http lets
 * through are added up here: `Number()` on a string goes through the runtime's generic conversion, on every call.
 */
export function declaredLength(value: string | undefined): number {
  if (value === undefined) return Number.NaN
  const n = value.length
  if (n === 0 || n > 15) return Number(value)
  let length = 0
  for (let i = 0; i < n; i++) {
    const digit = value.charCodeAt(i) - 48
    if (digit < 0 || digit > 9) return Number(value)
    length = length * 10 + digit
  }
  return length
}

/** Reads a request body up to `limit` bytes; answers 413 from `content-length` alone when it is already too large. */
export function readBody(req: IncomingMessage, limits: BodyLimits, reservation?: Reservation): Promise<Buffer> {
  const limit = limits.maxBytes
  const declared = declaredLength(req.headers['content-length'])
  if (declared > limit) return Promise.reject(tooLarge(limit))
  return collectBody(req, {
    limit,
    budget: reservation,
    overBudget: overloaded,
    deadline: {
      at: limits.deadline,
      error: () => new GatewayError('request_timeout', `The request body did not arrive within ${limits.deadline.ms} ms.`),
    },
    expectedBytes: Number.isNaN(declared) ? undefined : declared,
    afterOverflow: 'drain',
    errorAtClose: true,
    tooLarge: () => tooLarge(limit),
    // Node reports a client that hung up mid-body as an 'aborted' ECONNRESET error, or as a bare close.
    broken: (cause) =>
      cause === undefined || (cause as { code?: unknown }).code === 'ECONNRESET'
        ? new GatewayError('invalid_request', 'The client closed the connection before sending the whole body.')
        : new GatewayError('invalid_request', 'The request body could not be read.', { cause }),
  })
}

/**
 * Parses a body as a JSON object; answers 400 for anything else. `ascii`: the bytes are known to be ASCII, whose
 * Latin-1 text is its UTF-8 text, decoded for less.
 */
export function parseJsonObject(bytes: Buffer, ascii = false): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(bytes.toString(ascii ? 'latin1' : 'utf8'))
  } catch (error) {
    throw new GatewayError('invalid_request', `The request body is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.')
  }
  return value as Record<string, unknown>
}

/** Re-serialises a host parser's value compactly: the faithful copy left when the parser kept no bytes. */
function serialiseParsed(parsed: unknown, limit: number): RequestBody {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Buffer.isBuffer(parsed)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.')
  }
  let text: string
  try {
    text = JSON.stringify(parsed)
  } catch (error) {
    // JSON.stringify recurses: a body nested tens of thousands of levels deep overflows the stack.
    throw new GatewayError('invalid_request', 'The request body cannot be re-serialised as JSON (nested too deeply).', { cause: error })
  }
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length > limit) throw tooLarge(limit)
  return { bytes, fields: parsed as Record<string, unknown>, value: parsed as Record<string, unknown>, spans: undefined }
}

/**
 * Gets the body within the byte limit: the raw bytes a host parser kept, else (once a parser drained the
 * stream) a re-serialisation of its value, else the stream itself. Never waits on a drained stream.
 */
export async function obtainBody(req: IncomingMessage, limits: BodyLimits, read: BodyRead): Promise<RequestBody> {
  const { preparsed } = read
  const limit = limits.maxBytes
  const rules = { maxDepth: limits.maxDepth, singleKeys: read.readFields ?? NO_FIELDS }
  let bytes: Buffer
  if (preparsed?.raw !== undefined) {
    bytes = typeof preparsed.raw === 'string' ? Buffer.from(preparsed.raw, 'utf8') : preparsed.raw
  } else if (req.readableEnded) {
    if (preparsed?.parsed === undefined) {
      throw new GatewayError('internal_error', 'A middleware in front of the gateway read the request body and kept nothing of it.')
    }
    const body = serialiseParsed(preparsed.parsed, limit)
    inspectJson(body.bytes, rules)
    return body
  } else {
    const encoding = req.headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      throw new GatewayError('unsupported_media_type', `Content-Encoding '${encoding}' is not supported; send the JSON body uncompressed.`)
    }
    bytes = await readBody(req, limits, read.reservation)
  }
  if (bytes.length > limit) throw tooLarge(limit)
  const owned = preparsed?.raw === undefined
  return parsedAtOnce(bytes, rules, owned) ?? (await scannedBody(bytes, rules, read, owned))
}

/**
 * Checks body bytes in memory (UTF-8, JSON, `rules`) and reads what validation needs: the parsed object when the
 * body is cheap to parse, else a skeleton from the scanner, which yields to the event loop between slices.
 */
export async function bodyOfBytes(
  bytes: Buffer,
  rules: JsonRules,
  read: Pick<BodyRead, 'readsMembers' | 'elementFields'>,
  owned = false,
): Promise<RequestBody> {
  return parsedAtOnce(bytes, rules, owned) ?? (await scannedBody(bytes, rules, read, owned))
}

/** The 400 for bytes that are not UTF-8. */
function notUtf8(at: number): GatewayError {
  // JSON is UTF-8 (RFC 8259); anything else would be forwarded as sent but stored and hashed as something else.
  return new GatewayError('invalid_request', `The request body is not valid UTF-8 at byte ${at}; JSON must be sent as UTF-8.`)
}

/**
 * `bodyOfBytes` of a body cheap to parse, at once (no promise turn: the commonest body on every call's path); undefined
 * for one the scanner must read: a large body, or one of more containers than parsing whole may stall the loop for.
 */
function parsedAtOnce(bytes: Buffer, rules: JsonRules, owned: boolean): RequestBody | undefined {
  // A body no longer than the container limit cannot hold more containers than that: it is not counted.
  if (bytes.length >= SCAN_FROM_BYTES || (bytes.length > SCAN_FROM_CONTAINERS && !containersAtMost(bytes, SCAN_FROM_CONTAINERS))) {
    return undefined
  }
  const verdict = quickVerdict(bytes, rules)
  const ascii = (verdict & ALL_ASCII) !== 0
  if (!ascii) {
    const broken = invalidUtf8At(bytes)
    if (broken !== -1) throw notUtf8(broken)
  }
  const value = parseJsonObject(bytes, ascii)
  settleVerdict(verdict, bytes, rules)
  return { bytes, fields: value, value, spans: undefined, owned }
}

/** `bodyOfBytes` of a body the scanner reads, checked and scanned in slices with turns of the event loop between. */
async function scannedBody(
  bytes: Buffer,
  rules: JsonRules,
  read: Pick<BodyRead, 'readsMembers' | 'elementFields'>,
  owned: boolean,
): Promise<RequestBody> {
  const broken = bytes.length >= SCAN_FROM_BYTES ? await invalidUtf8AtInSlices(bytes) : invalidUtf8At(bytes)
  if (broken !== -1) throw notUtf8(broken)
  const scan = await scanJsonBody(bytes, {
    exactStrings: EXACT_STRINGS,
    rules,
    skeleton: read.readsMembers !== false,
    elementFields: read.elementFields,
  })
  return { bytes, fields: scan.fields, value: undefined, spans: scan.spans, owned }
}
