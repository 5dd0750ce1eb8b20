// The cache in the gateway's Redis store, so every process serves what any one of them stored. Answers live under
// their own prefix (`cache:`), each with its TTL; small sets index them by owner and by model for `cache.delete`,
// since listing by SCAN would walk the whole keyspace.
import type Keyv from 'keyv'
import { guarded } from '../recovery/store/guard.js'
import { RedisLink } from '../recovery/store/redis-link.js'
import type { TokenCounts } from '../types.js'
import type { AnswerStore, CachedAnswer } from './store.js'
import type { CacheFilter } from './types.js'

/** The longest a cache read or write waits for Redis: a call is never held up by a cache that stopped answering. */
const STEP_TIMEOUT_MS = 2000

/** The set commands of a node-redis v5 client, and the MULTI they are queued on. */
interface SetMulti {
  set(key: string, value: string, options: { PX: number }): SetMulti
  sAdd(key: string, members: string): SetMulti
  pExpire(key: string, ms: number): SetMulti
  exec(): Promise<unknown[]>
}
interface SetClient {
  get(key: string): Promise<unknown>
  sMembers(key: string): Promise<string[]>
  sInter(keys: string[]): Promise<string[]>
  sRem(key: string, members: string[]): Promise<number>
  unlink(keys: string[]): Promise<number>
  del(keys: string[]): Promise<number>
  multi(): SetMulti
}

/** The head stored before an answer's body, on one line. */
interface Envelope {
  kind: CachedAnswer['kind']
  contentType: string
  storedAt: number
  usage: TokenCounts | undefined
  owner: string
  model: string
}

/** Cached answers in Redis, behind the gateway store's Keyv prefixes. */
export class RedisAnswers implements AnswerStore {
  readonly #link: RedisLink

  constructor(keyv: Keyv, onError: (error: unknown) => void) {
    this.#link = new RedisLink(keyv, { waitMs: STEP_TIMEOUT_MS, onError })
  }

  #client(): SetClient {
    return this.#link.client as unknown as SetClient
  }

  #answerKey(id: string): string {
    return this.#link.key(`cache:${id}`)
  }

  #indexKey(filter: CacheFilter): string {
    if (filter.owner !== undefined) return this.#link.key(`cache-index:owner:${filter.owner}`)
    if (filter.model !== undefined) return this.#link.key(`cache-index:model:${filter.model}`)
    return this.#link.key('cache-index:all')
  }

  get(id: string): Promise<CachedAnswer | undefined> {
    return guarded('cache get', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const text = await this.#client().get(this.#answerKey(id))
      return typeof text === 'string' ? decode(text) : undefined
    })
  }

  set(id: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    return guarded('cache set', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const key = this.#answerKey(id)
      const multi = this.#client().multi().set(key, encode(answer), { PX: ttlMs })
      // Each index lives as long as the newest answer in it: every answer has the same TTL.
      for (const index of [{ owner: answer.owner }, { model: answer.model }, {}]) {
        const indexKey = this.#indexKey(index)
        multi.sAdd(indexKey, key).pExpire(indexKey, ttlMs)
      }
      await multi.exec()
    })
  }

  delete(filter: CacheFilter): Promise<number> {
    return guarded('cache delete', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const client = this.#client()
      const keys =
        filter.owner !== undefined && filter.model !== undefined
          ? await client.sInter([this.#indexKey({ owner: filter.owner }), this.#indexKey({ model: filter.model })])
          : await client.sMembers(this.#indexKey(filter))
      if (keys.length === 0) return 0
      // Entries of other indexes that name a deleted answer are left to expire: they only ever name keys.
      const deleted = await client.unlink(keys)
      if (filter.owner === undefined && filter.model === undefined) await client.del([this.#indexKey({})])
      else await client.sRem(this.#indexKey(filter), keys)
      return deleted
    })
  }
}

function encode(answer: CachedAnswer): string {
  const { kind, contentType, storedAt, usage, owner, model } = answer
  const envelope: Envelope = { kind, contentType, storedAt, usage, owner, model }
  return `${JSON.stringify(envelope)}\n${answer.body.toString('utf8')}`
}

function decode(text: string): CachedAnswer | undefined {
  const line = text.indexOf('\n')
  if (line < 0) return undefined
  try {
    const envelope = JSON.parse(text.slice(0, line)) as Envelope
    if (envelope.kind !== 'whole' && envelope.kind !== 'stream') return undefined
    return { ...envelope, body: Buffer.from(text.slice(line + 1), 'utf8') }
  } catch {
    // Not a value this gateway wrote: a miss.
    return undefined
  }
}
