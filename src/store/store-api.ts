// What the gateway's store offers and how it is built: the contract every user relies on (records, and the owners'
// single values that background calls, idempotency keys and stream journals keep), apart from the Keyv
// implementation in gateway-store.ts.
import type Keyv from 'keyv'
import type { RecoveryRecord, RecoverySummary } from '../types.js'
import type { Eviction, OwnerLimits } from './memory-catalog.js'
import type { Trim } from './redis-order.js'

/**
 * The gateway's key-value store, private per owner: recovery records, and single values (background calls' heads and
 * segments, idempotency claims, stream journals). All methods reject with GatewayError('store_unavailable') when the backing store fails.
 */
export interface GatewayStore {
  /** Rejects when the write did not take (Keyv's `set` returned false or threw, or the value did not stay). */
  put(owner: string, record: RecoveryRecord, ttlMs: number): Promise<void>
  /** Live records, newest first (created_at, then request_id, descending). */
  list(owner: string): Promise<RecoverySummary[]>
  /**
   * Up to `limit` live records in the same order, after the record `after` (from the start without it), and whether
   * more follow; undefined when `after` is not a live record. On Redis it reads only what the page needs.
   */
  listPage(owner: string, page: { limit: number; after?: string }): Promise<{ items: RecoverySummary[]; hasMore: boolean } | undefined>
  /** Same order, only records whose `request_body_hash` matches. */
  lookup(owner: string, hash: string): Promise<RecoverySummary[]>
  /** Undefined when the record, or any part of it, is missing or expired. */
  get(owner: string, requestId: string): Promise<RecoveryRecord | undefined>
  /** True when the record existed. */
  delete(owner: string, requestId: string): Promise<boolean>
  /**
   * Notes that the answer of `requestId` was served again at `at` (Unix seconds), for its record's `served_again_at`.
   * The first time counts. Written whether or not the record exists yet (it may be kept after its repeat was served);
   * kept `ttlMs`, as long as a record lives.
   */
  markServedAgain(owner: string, requestId: string, at: number, ttlMs: number): Promise<void>
  /** How many records were deleted (or, with `dryRun`, would be). Only the owner's records. */
  deleteAll(owner: string, options: { dryRun: boolean }): Promise<number>
  /** Sets an owner's single value unless it holds one; resolves the value there, or undefined when this call set it. */
  claimValue(owner: string, name: string, value: string, ttlMs: number): Promise<string | undefined>
  /**
   * Sets an owner's single value, replacing what is there. `counted` values (a background call's state) count
   * against the owner's byte quota and fair share in the in-memory store, as records do; past them the write is
   * refused once the owner's own oldest records are gone.
   */
  setValue(owner: string, name: string, value: string, ttlMs: number, options?: { counted?: boolean }): Promise<void>
  /** An owner's single value, or undefined. */
  getValue(owner: string, name: string): Promise<string | undefined>
  deleteValue(owner: string, name: string): Promise<void>
  /**
   * Whether other processes may read what this store holds: false for the default in-memory store, which is this
   * gateway's alone (a stream's journal is then written for nobody, and is not written).
   */
  readonly shared: boolean
  /** Whether the store can take commands now, answered within a second at most; never rejects. */
  healthy(): Promise<boolean>
  /** Resolves when the store can take commands; rejects with GatewayError('store_unavailable') within the store deadline otherwise. */
  ready(): Promise<void>
  /** Clears the default in-memory store, or disconnects a Keyv passed in; never waits longer than the store deadline. */
  close(): Promise<void>
}

/** How the gateway's store is built. */
export interface GatewayStoreOptions {
  /**
   * Where records live. A Keyv on @keyv/redis (any copy) is recognised by its client and gets a
   * race-free Redis hash catalog. Create it with `createKeyv(url, { namespace, connectionTimeout })`
   * (not `new Keyv(new KeyvRedis(url), { namespace })`, which prefixes twice); for fast failure while
   * Redis is down also pass client options `{ url, disableOfflineQueue: true, socket: { connectTimeout } }`.
   * @default an in-memory Keyv on lru-cache bounded by `maxMemoryBytes`
   */
  keyv?: Keyv
  /** Byte bound of the default in-memory store (ignored with `keyv`). @default 268435456 (256 MiB) */
  maxMemoryBytes?: number
  /** What one owner may keep. @default 10 000 records, 128 MiB (bytes are counted by the in-memory store only) */
  ownerLimits?: OwnerLimits
  /** Told of every record removed before its time (an owner's quota, or the memory store's byte bound). */
  onEvict?: (eviction: Eviction) => void
  /** Told when this process starts and ends a trim of an owner's oldest records on Redis (with how many it evicted). */
  onTrim?: (trim: Trim) => void
  /** Receives errors Keyv and its adapter emit (Keyv swallows them otherwise). */
  onError?: (err: unknown) => void
  /** Deadline of one store call, in ms. @default 5000 */
  timeoutMs?: number
}
