import type { Readable } from 'node:stream'
import type { UpstreamKey } from '../../config/resolve.js'
import type { KeySelection } from '../../types.js'
import { drain, retryAfterMs } from '../response.js'
import type { UpstreamRequest } from '../send.js'
import type { UpstreamInterceptor } from './compose.js'

/** Statuses that blame the key, not the request: it is refused or out of quota, so the next key may succeed. */
const KEY_TROUBLE = new Set([401, 403, 429])
/** The longest a key rests, whatever an upstream asks. */
const MAX_REST_MS = 60_000
const FIRST_REST_MS = 1000

/**
 * One upstream's keys and how the next is picked among those not resting: smooth weighted round robin (nginx's), or
 * the key with the fewest calls in flight (then the heavier, then the one picked longest ago).
 */
export class KeyPool {
  readonly #current: number[]
  readonly #restUntil: number[]
  readonly #strikes: number[]
  readonly #inFlight: number[]
  readonly #pickedAt: number[]
  #picks = 0

  constructor(
    private readonly keys: readonly UpstreamKey[],
    /** How the next key is picked. */
    readonly selection: KeySelection,
  ) {
    this.#current = keys.map(() => 0)
    this.#restUntil = keys.map(() => 0)
    this.#strikes = keys.map(() => 0)
    this.#inFlight = keys.map(() => 0)
    this.#pickedAt = keys.map(() => 0)
  }

  /** The next key not in `tried`, resting ones only when nothing else is left; undefined when all were tried. */
  pick(tried: ReadonlySet<number>): number | undefined {
    const now = Date.now()
    const best = this.selection === 'least-in-flight' ? this.#leastInFlight(tried, now) : this.#roundRobin(tried, now)
    if (best !== undefined) {
      this.#pickedAt[best] = ++this.#picks
      return best
    }
    // Every untried key rests: the one that wakes first is the best hope.
    let soonest: number | undefined
    for (let i = 0; i < this.keys.length; i++) {
      if (tried.has(i)) continue
      if (soonest === undefined || (this.#restUntil[i] as number) < (this.#restUntil[soonest] as number)) soonest = i
    }
    return soonest
  }

  #roundRobin(tried: ReadonlySet<number>, now: number): number | undefined {
    let best = -1
    let total = 0
    for (let i = 0; i < this.keys.length; i++) {
      if (tried.has(i) || (this.#restUntil[i] as number) > now) continue
      const weight = (this.keys[i] as UpstreamKey).weight
      this.#current[i] = (this.#current[i] as number) + weight
      total += weight
      if (best === -1 || (this.#current[i] as number) > (this.#current[best] as number)) best = i
    }
    if (best === -1) return undefined
    this.#current[best] = (this.#current[best] as number) - total
    return best
  }

  #leastInFlight(tried: ReadonlySet<number>, now: number): number | undefined {
    let best: number | undefined
    for (let i = 0; i < this.keys.length; i++) {
      if (tried.has(i) || (this.#restUntil[i] as number) > now) continue
      if (best === undefined || this.#before(i, best)) best = i
    }
    return best
  }

  /** Whether key `a` goes before key `b`: fewer calls in flight, then more weight, then picked longer ago. */
  #before(a: number, b: number): boolean {
    const calls = (this.#inFlight[a] as number) - (this.#inFlight[b] as number)
    if (calls !== 0) return calls < 0
    const weight = (this.keys[a] as UpstreamKey).weight - (this.keys[b] as UpstreamKey).weight
    if (weight !== 0) return weight > 0
    return (this.#pickedAt[a] as number) < (this.#pickedAt[b] as number)
  }

  /** A call on key `index` started; `finished` is its end. Only least-in-flight counts them. */
  started(index: number): void {
    this.#inFlight[index] = (this.#inFlight[index] as number) + 1
  }

  finished(index: number): void {
    this.#inFlight[index] = (this.#inFlight[index] as number) - 1
  }

  rest(index: number, askedMs: number | undefined): void {
    const strikes = (this.#strikes[index] as number) + 1
    this.#strikes[index] = strikes
    const backoff = Math.min(MAX_REST_MS, FIRST_REST_MS * 2 ** (strikes - 1))
    this.#restUntil[index] = Date.now() + Math.min(MAX_REST_MS, askedMs ?? backoff)
  }

  succeeded(index: number): void {
    this.#strikes[index] = 0
    this.#restUntil[index] = 0
  }

  /** Keys resting now, by alias: for status reports. */
  resting(): string[] {
    const now = Date.now()
    return this.keys.filter((_, i) => (this.#restUntil[i] as number) > now).map((key) => key.alias)
  }
}

/** Calls `done` once the answer is over: at once for a body read whole, when a streamed one closes (read or not). */
function whenOver(body: Readable | Buffer, done: () => void): void {
  if (Buffer.isBuffer(body)) done()
  else body.once('close', done)
}

/**
 * Spreads calls over an upstream's `apiKeys` by its `keySelection`. A key answered 401, 403 or 429 rests (for the
 * upstream's `retry-after`, else a backoff doubling from 1 s to 60 s) and the call moves to the next key: those
 * answers say no work was done, so nothing is paid twice. The last key's refusal is what the call gets.
 */
export function keyPool(): UpstreamInterceptor {
  // By name: an upstream's `forModel` variants share its one pool.
  const pools = new Map<string, KeyPool>()
  return (next) => {
    const pooled = async (request: UpstreamRequest) => {
      const { upstream } = request.model
      let pool = pools.get(upstream.name)
      if (pool === undefined) {
        pool = new KeyPool(upstream.keys, upstream.keySelection)
        pools.set(upstream.name, pool)
      }
      // Counting costs a listener per streamed answer: only the selection that reads the counts pays it.
      const counts = pool.selection === 'least-in-flight'
      const tried = new Set<number>()
      for (let attempt = request.attempt; ; attempt++) {
        const index = pool.pick(tried) as number
        tried.add(index)
        if (counts) pool.started(index)
        let response: Awaited<ReturnType<typeof next>>
        try {
          response = await next({ ...request, key: upstream.keys[index], attempt })
        } catch (error) {
          if (counts) pool.finished(index)
          throw error
        }
        if (counts) whenOver(response.body, () => pool.finished(index))
        if (!KEY_TROUBLE.has(response.statusCode)) {
          pool.succeeded(index)
          return response
        }
        pool.rest(index, retryAfterMs(response.headers))
        if (tried.size === upstream.keys.length) return response
        await drain(response.body)
      }
    }
    // An upstream with one key goes straight through: no async frame, no promise turn of this interceptor's.
    return (request) => (request.model.upstream.keys.length < 2 ? next(request) : pooled(request))
  }
}
