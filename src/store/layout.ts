import { invariant } from '../errors.js'
import type { RecoveryRecord, RecoverySummary } from '../types.js'
import { storeUnavailable } from './guard.js'

/*
 * Key layout, under the Keyv namespace (default `model-gateway`):
 *
 *   rec:{<owner>}:<request_id>       detail envelope: summary + request/response meta + body lengths
 *   rec:{<owner>}:<request_id>:req   request.body_raw, a plain string
 *   rec:{<owner>}:<request_id>:res   response.body_raw, a plain string (then response.stream_raw, for a stream)
 *   val:{<owner>}:<kind>:<digest>    one small value: an idempotency key's claim or kept answer, a running call's claim
 *   val:{<owner>}:live:<request_id>[:<n>]  the journal of a call whose client left: its head, then its events in segments
 *   val:{<owner>}:cancel:<request_id>      a cancel asked for in another process
 *   idx:{<owner>}                    the owner's catalog of summaries (a Keyv value, or a Redis hash; the default
 *                                    in-memory store keeps its catalog beside the cache instead)
 *   ord:{<owner>}                    on Redis only: the catalog's order, a sorted set of `<created_at>:<request_id>`
 *   lock:{<owner>}:trim              on Redis only: held (briefly) by the one process trimming the owner's oldest records
 *
 * The braces are literal: on Redis Cluster they are a hash tag, so every key of one owner lives
 * in one slot and the few multi-key commands the store sends stay legal.
 */

/** Owner ids are hex digests; anything else could carry `:`, `*` or `{` into a key. */
const OWNER_PATTERN = /^[0-9a-f]{8,128}$/
/** Request ids are ULIDs: 26 Crockford base32 characters. */
const REQUEST_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/

/**
 * The one place that guards key material; every store method calls it before building a key. Callers pass only
 * owner digests and request ids they checked, so a failure here is a bug, not a client's bad input.
 */
export function assertKeyParts(owner: string, requestId?: string): void {
  invariant(typeof owner === 'string' && OWNER_PATTERN.test(owner), "invalid owner id for the gateway's store")
  invariant(
    requestId === undefined || (typeof requestId === 'string' && REQUEST_ID_PATTERN.test(requestId)),
    "invalid request id for the gateway's store",
  )
}

/** The three keys of one record, detail envelope first. */
export interface RecordKeys {
  detail: string
  request: string
  response: string
}

export function recordKeys(owner: string, requestId: string): RecordKeys {
  const detail = `rec:{${owner}}:${requestId}`
  return { detail, request: `${detail}:req`, response: `${detail}:res` }
}

/** Deletes the three keys of one record; resolves once all three calls answered. */
export function deleteRecordKeys(keyv: { delete(key: string): Promise<unknown> }, keys: RecordKeys): Promise<unknown> {
  return Promise.all([keyv.delete(keys.detail), keyv.delete(keys.request), keyv.delete(keys.response)])
}

/**
 * Names of an owner's single values: hex digests (idempotency state) or request ids with an optional number (a
 * segment of a call's journal, or a time in ms: the lease a background call's lapse keys are about), so no client
 * text reaches a key.
 */
const VALUE_NAME_PATTERN = /^[a-z]+:(?:[0-9a-f]{16,64}|[0-9A-HJKMNP-TV-Z]{26}(?::\d{1,15})?)$/

/** The key of one of an owner's single values, e.g. `val:{<owner>}:key:<digest>`. */
export function valueKey(owner: string, name: string): string {
  assertKeyParts(owner)
  invariant(VALUE_NAME_PATTERN.test(name), "invalid value name for the gateway's store")
  return `val:{${owner}}:${name}`
}

/** One value of a record under its logical key. */
export interface RecordValue {
  key: string
  value: unknown
}

/** Writes values one after the other through Keyv (order matters in memory, see lru-adapter.ts); rejects on the first not taken. */
export async function setRecordValues(
  keyv: { set(key: string, value: unknown, ttl?: number): Promise<unknown> },
  values: RecordValue[],
  ttlMs: number,
): Promise<void> {
  for (const { key, value } of values) {
    const ok: unknown = await keyv.set(key, value, ttlMs)
    if (ok === false) throw storeUnavailable("The gateway's store did not take a write.")
  }
}

export function catalogKey(owner: string): string {
  return `idx:{${owner}}`
}

/** The Redis sorted set that orders an owner's catalog (all scores 0, ordered by member). */
export function orderKey(owner: string): string {
  return `ord:{${owner}}`
}

/** The short-lived Redis key a process holds while it trims an owner's oldest records. */
export function trimLockKey(owner: string): string {
  return `lock:{${owner}}:trim`
}

/** Digits of `created_at` in an order member: fixed width, so byte order is number order. */
const CREATED_DIGITS = 15

/**
 * An entry's member in the order set: `created_at` zero-padded, then the request id, so byte order is exactly
 * `newestFirst` reversed and a page can start right after any entry (`ZRANGE … BYLEX`), however many share a second.
 */
export function orderMember(entry: { created_at: number; request_id: string }): string {
  const created = Math.min(10 ** CREATED_DIGITS - 1, Math.max(0, Math.floor(entry.created_at)))
  return `${String(created).padStart(CREATED_DIGITS, '0')}:${entry.request_id}`
}

/** The request id in an order member. */
export function memberRequestId(member: string): string {
  return member.slice(CREATED_DIGITS + 1)
}

/** A summary as the catalog keeps it: the four summary fields plus when the record expires (Unix ms). */
export interface CatalogEntry extends RecoverySummary {
  expires_at: number
}

export function toCatalogEntry(record: RecoveryRecord, expiresAt: number): CatalogEntry {
  return {
    request_id: record.request_id,
    created_at: record.created_at,
    interrupted_reason: record.interrupted_reason,
    request_body_hash: record.request_body_hash,
    expires_at: expiresAt,
  }
}

/** Exactly the four summary fields. */
export function toSummary(entry: CatalogEntry): RecoverySummary {
  return {
    request_id: entry.request_id,
    created_at: entry.created_at,
    interrupted_reason: entry.interrupted_reason,
    request_body_hash: entry.request_body_hash,
  }
}

/** A catalog entry read back from a store, or undefined when it is not one. */
export function parseCatalogEntry(value: unknown): CatalogEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const v = value as Record<string, unknown>
  if (
    typeof v.request_id !== 'string' ||
    !REQUEST_ID_PATTERN.test(v.request_id) ||
    typeof v.created_at !== 'number' ||
    typeof v.interrupted_reason !== 'string' ||
    typeof v.request_body_hash !== 'string' ||
    typeof v.expires_at !== 'number'
  ) {
    return undefined
  }
  return {
    request_id: v.request_id,
    created_at: v.created_at,
    interrupted_reason: v.interrupted_reason,
    request_body_hash: v.request_body_hash,
    expires_at: v.expires_at,
  }
}

/** Newest first: by created_at, then by request id (ids are time-sortable). */
export function newestFirst(a: RecoverySummary, b: RecoverySummary): number {
  if (a.created_at !== b.created_at) return b.created_at - a.created_at
  return a.request_id < b.request_id ? 1 : a.request_id > b.request_id ? -1 : 0
}

type RequestMeta = Omit<RecoveryRecord['request'], 'body_raw'>
type ResponseMeta = Omit<RecoveryRecord['response'], 'body_raw' | 'stream_raw'>

/** The small detail value: everything but the two bodies, plus their lengths to check them on read. */
export interface DetailEnvelope {
  v: 1
  record: Omit<RecoveryRecord, 'request' | 'response'> & { request: RequestMeta; response: ResponseMeta }
  request_chars: number
  response_chars: number
  /** The length of `stream_raw`, stored right after `body_raw` in the response value; absent for a whole response. */
  stream_chars?: number
}

/** Splits a record into its envelope and its two bodies; the bodies are never stringified here. */
export function splitRecord(record: RecoveryRecord): { envelope: DetailEnvelope; requestBody: string; responseBody: string } {
  const { request, response, ...top } = record
  const { body_raw: requestBody, ...requestMeta } = request
  const { body_raw: responseBody, stream_raw: streamRaw, ...responseMeta } = response
  invariant(typeof requestBody === 'string' && typeof responseBody === 'string', 'a recovery record needs string bodies')
  const envelope: DetailEnvelope = {
    v: 1,
    record: { ...top, request: requestMeta, response: responseMeta },
    request_chars: requestBody.length,
    response_chars: responseBody.length,
  }
  if (streamRaw === undefined) return { envelope, requestBody, responseBody }
  // One value for both texts: a stream's record keeps the same three keys as any other.
  envelope.stream_chars = streamRaw.length
  return { envelope, requestBody, responseBody: responseBody + streamRaw }
}

/** Rebuilds a record; undefined when a part is missing, malformed or does not belong to the envelope. */
export function joinRecord(envelope: unknown, requestBody: unknown, responseBody: unknown): RecoveryRecord | undefined {
  if (typeof requestBody !== 'string' || typeof responseBody !== 'string') return undefined
  if (typeof envelope !== 'object' || envelope === null) return undefined
  const e = envelope as Partial<DetailEnvelope>
  if (e.v !== 1 || typeof e.record !== 'object' || e.record === null) return undefined
  if (typeof e.response_chars !== 'number' || e.request_chars !== requestBody.length) return undefined
  if (e.response_chars + (e.stream_chars ?? 0) !== responseBody.length) return undefined
  const { request, response, ...top } = e.record
  if (typeof request !== 'object' || request === null || typeof response !== 'object' || response === null) return undefined
  // Fresh objects every time: with the in-memory store the envelope is held by reference.
  if (e.stream_chars === undefined)
    return { ...top, request: { body_raw: requestBody, ...request }, response: { body_raw: responseBody, ...response } }
  const body = responseBody.slice(0, e.response_chars)
  const stream = responseBody.slice(e.response_chars)
  return { ...top, request: { body_raw: requestBody, ...request }, response: { body_raw: body, ...response, stream_raw: stream } }
}
