import type Keyv from 'keyv'
import { decodeInSlices, SliceTurns } from '../http/join-chunks.js'
import { keyvStringInSlices, parseJsonInSlices } from '../json/parse-in-slices.js'
import { jsonBytesInSlices, TEXT_SLICE_CHARS } from '../json/text-in-slices.js'
import { storeUnavailable } from './guard.js'

/** The part of a node-redis v5 MULTI (a single client's or a cluster's) the Redis catalog uses. */
export interface RedisMulti {
  set(key: string, value: string | Buffer, options: { PX: number }): RedisMulti
  hSet(key: string, field: string, value: string): RedisMulti
  hDel(key: string, fields: string | string[]): RedisMulti
  pExpire(key: string, ms: number, mode?: 'NX' | 'GT'): RedisMulti
  hLen(key: string): RedisMulti
  zAdd(key: string, members: { score: number; value: string } | Array<{ score: number; value: string }>): RedisMulti
  zRem(key: string, members: string | string[]): RedisMulti
  zCard(key: string): RedisMulti
  pTTL(key: string): RedisMulti
  exists(keys: string | string[]): RedisMulti
  unlink(keys: string | string[]): RedisMulti
  exec(): Promise<unknown[]>
  execAsPipeline(): Promise<unknown[]>
}

/** One page of HSCAN as node-redis v5 returns it. */
export interface HashScanPage {
  cursor: unknown
  entries: Array<{ field: unknown; value: unknown }>
}

/** The part of a node-redis v5 client or cluster (camelCase commands) the Redis store uses. */
export interface RedisLikeClient {
  readonly isOpen?: boolean
  readonly isReady?: boolean
  hScan(key: string, cursor: string, options?: { COUNT?: number }): Promise<HashScanPage>
  hDel(key: string, fields: string | string[]): Promise<number>
  hGet(key: string, field: string): Promise<unknown>
  hmGet(key: string, fields: string[]): Promise<unknown[]>
  hLen(key: string): Promise<number>
  zRange(
    key: string,
    min: string,
    max: string,
    options: { BY: 'LEX'; REV?: boolean; LIMIT: { offset: number; count: number } },
  ): Promise<unknown[]>
  zRem(key: string, members: string | string[]): Promise<number>
  unlink(keys: string | string[]): Promise<number>
  exists(keys: string | string[]): Promise<number>
  set(key: string, value: string, options: { condition?: 'NX'; expiration: { type: 'PX'; value: number } }): Promise<unknown>
  get(key: string): Promise<unknown>
  /** The same client answering with other types (node-redis v5): bulk strings as bytes, for a large value. */
  withTypeMapping?(mapping: Record<number, unknown>): { get(key: string): Promise<unknown> }
  del(keys: string | string[]): Promise<number>
  multi(): RedisMulti
  /** A Lua script (a cluster runs it on the node of its first key). */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
  connect?(): Promise<unknown>
  once?(event: 'ready', listener: () => void): unknown
  off?(event: 'ready', listener: () => void): unknown
}

/** The part of @keyv/redis's adapter (KeyvRedis) used to reach the client and mirror its key prefixes. */
interface RedisAdapterLike {
  client: RedisLikeClient
  namespace?: string
  keyPrefixSeparator?: string
  createKeyPrefix?(key: string, namespace?: string): string
  getClient?(): Promise<unknown>
  disconnect?(force?: boolean): Promise<void>
}

const isFunction = (value: unknown): boolean => typeof value === 'function'

/** Commands a node-redis v5 client and a cluster both have (a cluster has no `isReady`, so that is not asked). */
const REQUIRED_COMMANDS = ['hSet', 'hScan', 'hDel', 'hmGet', 'zRange', 'pExpire', 'exists', 'unlink', 'multi']

function isRedisAdapter(store: unknown): store is RedisAdapterLike {
  if (typeof store !== 'object' || store === null) return false
  const client: unknown = (store as { client?: unknown }).client
  if (typeof client !== 'object' || client === null) return false
  const c = client as Record<string, unknown>
  return REQUIRED_COMMANDS.every((name) => isFunction(c[name]))
}

/** Whether this Keyv sits on a node-redis v5 client or cluster (@keyv/redis 4+/5, any copy of the packages). */
export function isRedisKeyv(keyv: Keyv): boolean {
  return isRedisAdapter(keyv.store)
}

/** Redis < 7 rejects PEXPIRE's NX/GT flags (arity error at queue time: the transaction is discarded, nothing ran). */
export function isUnsupportedExpireMode(error: unknown): boolean {
  const texts = [String((error as { message?: unknown })?.message ?? error)]
  const replies = (error as { replies?: unknown })?.replies
  if (Array.isArray(replies)) for (const reply of replies) texts.push(String((reply as { message?: unknown })?.message ?? reply))
  return texts.some((text) => /wrong number of arguments|syntax error|unsupported option/i.test(text))
}

/**
 * A Keyv's Redis client as the catalog sees it: keys prefixed the way Keyv and KeyvRedis prefix them, values
 * serialised the way Keyv serialises them, and the connection state (first connect, lost connection, close).
 */
export class RedisLink {
  readonly #keyv: Keyv
  readonly #adapter: RedisAdapterLike
  readonly #waitMs: number
  readonly #onError: (error: unknown) => void
  #connecting: Promise<void> | undefined
  #waiting: Promise<void> | undefined
  /** Whether Redis has been ready once: until then every call waits for it; after, a lost connection fails fast. */
  #everReady = false

  /** `waitMs`: how long calls wait for the first connection (never for a lost one). */
  constructor(keyv: Keyv, options: { waitMs: number; onError: (error: unknown) => void }) {
    if (!isRedisAdapter(keyv.store)) throw new TypeError('RedisCatalog needs a Keyv on a Redis adapter')
    this.#keyv = keyv
    this.#adapter = keyv.store
    this.#waitMs = options.waitMs
    this.#onError = options.onError
  }

  /** The client or cluster behind the adapter (the adapter may swap it, so it is read each time). */
  get client(): RedisLikeClient {
    return this.#adapter.client
  }

  /** The key as stored in Redis, mirroring how Keyv and KeyvRedis prefix it. */
  key(key: string): string {
    const keyv = this.#keyv
    const logical = isFunction(keyv._getKeyPrefix)
      ? keyv._getKeyPrefix(key)
      : keyv.useKeyPrefix !== false && keyv.namespace
        ? `${keyv.namespace}:${key}`
        : key
    const adapter = this.#adapter
    if (typeof adapter.createKeyPrefix === 'function') return adapter.createKeyPrefix(logical, adapter.namespace)
    return adapter.namespace ? `${adapter.namespace}${adapter.keyPrefixSeparator ?? '::'}${logical}` : logical
  }

  /**
   * What Keyv's own `set` would store for `value` (its serializer and compression, `expires` included), so Keyv reads
   * it back. A long string under Keyv's default serializer is written as its UTF-8 bytes a slice at a time: at once,
   * a kept stream's 60 MB record stalled the loop for a tenth of a second, and as much again to encode it.
   */
  async serialize(value: unknown, expires: number): Promise<string | Buffer> {
    if (typeof value === 'string' && value.length > TEXT_SLICE_CHARS && this.#defaultSerializer()) {
      // The default serializer marks a string that starts with `:` by one more (its `:base64:` values start so).
      const marked = value.charCodeAt(0) === 0x3a ? `:${value}` : value
      const bytes = await jsonBytesInSlices(marked, '{"value":', `,"expires":${JSON.stringify(expires)}}`)
      if (bytes) return bytes
    }
    const serialized: unknown = await this.#keyv.serializeData({ value, expires })
    if (typeof serialized !== 'string') throw storeUnavailable("The gateway's store needs a Keyv that serialises values to strings.")
    return serialized
  }

  /**
   * What Keyv's own `get` reads for `key`: undefined when absent, expired or unreadable (Keyv reports a failed read as
   * an error and answers undefined, and so does this). A long value under Keyv's default serializer is parsed a slice
   * at a time: at once, `GET /v1/recoveries/{id}` of a 30 MB record stalled the loop for tens of milliseconds.
   */
  async read(key: string): Promise<unknown> {
    if (!this.#defaultSerializer()) return this.#keyv.get(key)
    let reply: unknown
    try {
      // As bytes where the client can: node-redis decodes a bulk string at once (a 39 MB one: a tenth of a second).
      const client = this.client
      reply = await (client.withTypeMapping?.(BYTES_REPLIES) ?? client).get(this.key(key))
    } catch (error) {
      this.#onError(error)
      return undefined
    }
    const read = await this.#deserialized(reply)
    if (typeof read !== 'object' || read === null) return undefined
    if (typeof read.expires === 'number' && Date.now() > read.expires) return undefined
    return read.value
  }

  /** A reply as Keyv's default deserializer reads it: a long string's a slice at a time, anything else at once. */
  async #deserialized(reply: unknown): Promise<{ value?: unknown; expires?: unknown } | undefined> {
    if (!Buffer.isBuffer(reply) && typeof reply !== 'string') return undefined
    const sliced = reply.length > TEXT_SLICE_CHARS ? await stringInSlices(reply) : undefined
    if (sliced) return sliced
    const text = Buffer.isBuffer(reply) ? await textOf(reply) : reply
    return (await this.#keyv.deserializeData(text)) as { value?: unknown; expires?: unknown } | undefined
  }

  /**
   * Whether the Keyv serialises as its default serializer does, told by what it writes for a probe that shows its
   * marks (a leading `:`, escapes, key order), and without compression: only then are long strings written in slices.
   * Asked each time (it is cheap): a Keyv's serializer and compression can be changed after the store is made.
   */
  #defaultSerializer(): boolean {
    let probe: unknown
    try {
      // Another copy of Keyv may keep its compression in its options only.
      const compressed = this.#keyv.compression ?? (this.#keyv.opts as { compression?: unknown } | undefined)?.compression
      probe = compressed ? undefined : this.#keyv.serialize?.({ value: ':a"\\\u2028é', expires: 1 })
    } catch {
      return false
    }
    const expected = `{"value":${JSON.stringify('::a"\\\u2028é')},"expires":1}`
    if (probe !== expected) return false
    try {
      const back = this.#keyv.deserialize?.(expected) as { value?: unknown; expires?: unknown } | undefined
      return back?.value === ':a"\\\u2028é' && back.expires === 1
    } catch {
      return false
    }
  }

  /**
   * Whether the client is ready now, Redis having been up once: a command may be sent without waiting on `ready()`
   * (which costs a promise turn on every call). False means: await `ready()`.
   */
  readyNow(): boolean {
    return this.#everReady && this.client.isReady === true
  }

  /** Resolves when Redis can take commands now; rejects (store_unavailable) when it is known to be down. */
  async ready(): Promise<void> {
    const client = this.client
    if (client.isReady === true) {
      this.#everReady = true
      return
    }
    if (client.isReady === undefined) {
      // A cluster only says whether it is open, and it is open before it knows its slots: concurrent first
      // commands would fail, so they all wait for the one connect. After that the per-call deadline bounds every command.
      if (client.isOpen === false) this.#connect()
      await this.#connecting
      return
    }
    if (client.isOpen === false) this.#connect()
    // Until Redis has been up once, every call waits (up to waitMs) for the first connection, so a slow cold start
    // within the writer's retries loses nothing. Once Redis has been up, a client that is not ready means Redis is
    // down: fail now instead of queueing, and let the client (or the connect just started) reconnect in the background.
    if (this.#everReady) throw storeUnavailable('Redis is not connected.')
    this.#waiting ??= this.#waitReady().finally(() => {
      this.#waiting = undefined
    })
    await this.#waiting
    this.#everReady = true
  }

  /** Disconnects the Keyv, without waiting on a Redis that cannot answer. */
  async disconnect(): Promise<void> {
    // A graceful close (QUIT) waits for every queued command: forever while Redis is down and the client
    // queues offline. A client that is not ready has nothing worth waiting for, so it is destroyed.
    if (this.client.isReady === false && typeof this.#adapter.disconnect === 'function') await this.#adapter.disconnect(true)
    else await this.#keyv.disconnect()
  }

  #connect(): void {
    if (this.#connecting) return
    const adapter = this.#adapter
    this.#connecting = Promise.resolve()
      .then(() => (typeof adapter.getClient === 'function' ? adapter.getClient() : adapter.client.connect?.()))
      .then(
        () => undefined,
        (error: unknown) => this.#onError(error),
      )
      .finally(() => {
        this.#connecting = undefined
      })
  }

  /** Waits for 'ready', for the connection attempt to end, or for `waitMs`, whichever comes first. */
  #waitReady(): Promise<void> {
    const client = this.client
    return new Promise<void>((resolve, reject) => {
      let settled = false
      const finish = () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        client.off?.('ready', finish)
        if (client.isReady === true) {
          resolve()
        } else {
          reject(storeUnavailable(`Redis is not connected (waited up to ${this.#waitMs} ms).`))
        }
      }
      const timer = setTimeout(finish, this.#waitMs)
      timer.unref()
      client.once?.('ready', finish)
      void this.#connecting?.then(finish)
      if (client.isReady === true) finish()
    })
  }
}

/** node-redis's type mapping for bulk strings (RESP type `$`, 36) answered as Buffers. */
const BYTES_REPLIES = { 36: Buffer }

/** The UTF-8 text of a reply's bytes: a large one decoded a slice at a time. */
function textOf(bytes: Buffer): Promise<string> | string {
  if (bytes.length <= TEXT_SLICE_CHARS) return bytes.toString('utf8')
  return decodeInSlices(bytes, 0, bytes.length, new SliceTurns()).then((decoded) => decoded.text)
}

/**
 * What Keyv's default serializer wrote for an unmarked string, read a slice at a time: from its bytes without decoding
 * them whole, or from a client's text; undefined for anything else.
 */
async function stringInSlices(reply: Buffer | string): Promise<{ value: string; expires: unknown } | undefined> {
  if (Buffer.isBuffer(reply)) return keyvStringInSlices(reply)
  return reply.startsWith('{"value":"') && reply.charCodeAt(10) !== 0x3a ? stringValue(await parseJsonInSlices(reply)) : undefined
}

/** A `{ value, expires }` whose value is a string, as Keyv's deserializer reads it; undefined for anything else. */
function stringValue(data: unknown): { value: string; expires: unknown } | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const { value, expires } = data as { value?: unknown; expires?: unknown }
  return typeof value === 'string' ? { value, expires } : undefined
}
