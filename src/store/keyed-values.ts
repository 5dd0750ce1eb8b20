import type Keyv from 'keyv'
import { KeyedMutex, storeUnavailable } from './guard.js'
import type { RedisLink } from './redis-link.js'

/**
 * Small string values beside the records, one key each, with a set-if-absent: what idempotency keys and running
 * calls are claimed with. Values are opaque strings; the caller owns their format.
 */
export interface KeyedValues {
  /** Sets `value` unless the key holds one; resolves the value already there, or undefined when this call set it. */
  claim(key: string, value: string, ttlMs: number): Promise<string | undefined>
  /** Sets `value`, replacing what is there. */
  set(key: string, value: string, ttlMs: number): Promise<void>
  /** The value, or undefined when there is none (or it expired). */
  get(key: string): Promise<string | undefined>
  delete(key: string): Promise<void>
}

const asText = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/**
 * Over any Keyv: the claim is a read then a write under an in-process lock, so it is atomic within one process
 * only (the in-memory default, or a store no other process shares). Redis gets `RedisValues`.
 */
export class KeyvValues implements KeyedValues {
  readonly #mutex = new KeyedMutex()

  constructor(private readonly keyv: Keyv) {}

  claim(key: string, value: string, ttlMs: number): Promise<string | undefined> {
    return this.#mutex.run(key, async () => {
      const existing = asText(await this.keyv.get(key))
      if (existing !== undefined) return existing
      await this.set(key, value, ttlMs)
      return undefined
    })
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const ok: unknown = await this.keyv.set(key, value, Math.ceil(ttlMs))
    if (ok === false) throw storeUnavailable("The gateway's store did not take a write.")
  }

  async get(key: string): Promise<string | undefined> {
    return asText(await this.keyv.get(key))
  }

  async delete(key: string): Promise<void> {
    await this.keyv.delete(key)
  }
}

/** Over Redis: the claim is one `SET NX PX`, atomic across every process sharing the server. */
export class RedisValues implements KeyedValues {
  constructor(private readonly link: RedisLink) {}

  async claim(key: string, value: string, ttlMs: number): Promise<string | undefined> {
    const physical = this.link.key(key)
    const expiration = { type: 'PX' as const, value: Math.max(1, Math.ceil(ttlMs)) }
    // A value that expires between the refused SET and the GET is claimed on the second turn.
    for (let turn = 0; turn < 2; turn++) {
      const reply = await this.link.client.set(physical, value, { condition: 'NX', expiration })
      if (reply !== null && reply !== undefined) return undefined
      const existing = asText(await this.link.client.get(physical))
      if (existing !== undefined) return existing
    }
    throw storeUnavailable("The gateway's store could not claim a key.")
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const expiration = { type: 'PX' as const, value: Math.max(1, Math.ceil(ttlMs)) }
    await this.link.client.set(this.link.key(key), value, { expiration })
  }

  async get(key: string): Promise<string | undefined> {
    return asText(await this.link.client.get(this.link.key(key)))
  }

  async delete(key: string): Promise<void> {
    await this.link.client.del(this.link.key(key))
  }
}
