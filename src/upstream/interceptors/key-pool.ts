import type { ResolvedUpstream, UpstreamKey } from '../../config/resolve.js'
import { drain, retryAfterMs } from '../response.js'
import type { UpstreamInterceptor } from './compose.js'

/** Statuses that blame the key, not the request: it is refused or out of quota, so the next key may succeed. */
const KEY_TROUBLE = new Set([401, 403, 429])
/** The longest a key rests, whatever an upstream asks. */
const MAX_REST_MS = 60_000
const FIRST_REST_MS = 1000

/** One upstream's keys: smooth weighted round robin (nginx's) over the keys that are not resting. */
class KeyPool {
  readonly #current: number[]
  readonly #restUntil: number[]
  readonly #strikes: number[]

  constructor(private readonly keys: readonly UpstreamKey[]) {
    this.#current = keys.map(() => 0)
    this.#restUntil = keys.map(() => 0)
    this.#strikes = keys.map(() => 0)
  }

  /** The next key not in `tried`, resting ones only when nothing else is left; undefined when all were tried. */
  pick(tried: ReadonlySet<number>): number | undefined {
    const now = Date.now()
    let best = -1
    let total = 0
    for (let i = 0; i < this.keys.length; i++) {
      if (tried.has(i) || (this.#restUntil[i] as number) > now) continue
      const weight = (this.keys[i] as UpstreamKey).weight
      this.#current[i] = (this.#current[i] as number) + weight
      total += weight
      if (best === -1 || (this.#current[i] as number) > (this.#current[best] as number)) best = i
    }
    if (best !== -1) {
      this.#current[best] = (this.#current[best] as number) - total
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

/**
 * Spreads calls over an upstream's `apiKeys`. A key answered 401, 403 or 429 rests (for the upstream's
 * `retry-after`, else a backoff doubling from 1 s to 60 s) and the call moves to the next key: those answers say
 * no work was done, so nothing is paid twice. The last key's refusal is what the call gets.
 */
export function keyPool(): UpstreamInterceptor {
  const pools = new Map<ResolvedUpstream, KeyPool>()
  return (next) => async (request) => {
    const { upstream } = request.model
    if (upstream.keys.length < 2) return next(request)
    let pool = pools.get(upstream)
    if (!pool) {
      pool = new KeyPool(upstream.keys)
      pools.set(upstream, pool)
    }
    const tried = new Set<number>()
    for (let attempt = request.attempt; ; attempt++) {
      const index = pool.pick(tried) as number
      tried.add(index)
      const response = await next({ ...request, key: upstream.keys[index], attempt })
      if (!KEY_TROUBLE.has(response.statusCode)) {
        pool.succeeded(index)
        return response
      }
      pool.rest(index, retryAfterMs(response.headers))
      if (tried.size === upstream.keys.length) return response
      await drain(response.body)
    }
  }
}
