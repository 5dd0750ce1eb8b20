// The cache in the gateway's Redis store, so every process serves what any one of them stored. Answers live under
// their own prefix (`cache:`), each with its TTL; small sets index them by owner and by model for `cache.delete`,
// since listing by SCAN would walk the whole keyspace.
import type Keyv from 'keyv'
import { DeadlineSweeper } from '../http/deadlines.js'
import { guarded, guardedBy } from '../store/guard.js'
import { RedisLink } from '../store/redis-link.js'
import type { TokenCounts } from '../types.js'
import type { AnswerStore, CachedAnswer } from './store.js'
import type { CacheFilter } from './types.js'

/** The longest a cache read or write waits for Redis: a call is never held up by a cache that stopped answering. */
const STEP_TIMEOUT_MS = 2000

/**
 * The commands of a node-redis v5 client or cluster the cache sends, each naming one key: on a cluster the answer and
 * its indexes live in different slots, so nothing is sent as one MULTI or one multi-key command (node-redis pipelines
 * the commands of one tick anyway).
 */
interface SetClient {
  get(key: string): Promise<unknown>
  set(key: string, value: string, options: { expiration: { type: 'PX'; value: number } }): Promise<unknown>
  sAdd(key: string, members: string): Promise<number>
  pExpire(key: string, ms: number): Promise<number>
  sMembers(key: string): Promise<string[]>
  sRem(key: string, members: string[]): Promise<number>
  unlink(key: string): Promise<number>
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
  /** The deadline of every lookup: one sweeper, not a timer per hit (a timer and a race of two promises cost more than the GET's own work). */
  readonly #deadline = new DeadlineSweeper(STEP_TIMEOUT_MS)

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
    return guardedBy(this.#deadline, 'cache get', async () => {
      if (!this.#link.readyNow()) await this.#link.ready()
      const text = await this.#client().get(this.#answerKey(id))
      return typeof text === 'string' ? decode(text) : undefined
    })
  }

  set(id: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    return guarded('cache set', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const client = this.#client()
      const key = this.#answerKey(id)
      const sent: Promise<unknown>[] = [client.set(key, encode(answer), { expiration: { type: 'PX', value: ttlMs } })]
      // Each index lives as long as the newest answer in it: every answer has the same TTL.
      for (const index of [{ owner: answer.owner }, { model: answer.model }, {}]) {
        const indexKey = this.#indexKey(index)
        sent.push(client.sAdd(indexKey, key), client.pExpire(indexKey, ttlMs))
      }
      await Promise.all(sent)
    })
  }

  delete(filter: CacheFilter): Promise<number> {
    return guarded('cache delete', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const client = this.#client()
      let keys = await client.sMembers(this.#indexKey(filter))
      if (filter.owner !== undefined && filter.model !== undefined) {
        const ofModel = new Set(await client.sMembers(this.#indexKey({ model: filter.model })))
        keys = keys.filter((key) => ofModel.has(key))
      }
      if (keys.length === 0) return 0
      // Entries of other indexes that name a deleted answer are left to expire: they only ever name keys.
      const unlinked = await Promise.all(keys.map((key) => client.unlink(key)))
      await client.sRem(this.#indexKey(filter), keys)
      return unlinked.reduce((sum, n) => sum + n, 0)
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
