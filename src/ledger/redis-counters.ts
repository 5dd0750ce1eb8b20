// The counters on Redis: one hash per owner, changed by one Lua script, so a check (read, compare, count) is one
// atomic round trip whatever the number of processes. The key holds the owner in a hash tag (`ledger:{owner}`): on
// a cluster, every key of one owner lives in one slot. Windows follow Redis's own clock, so processes whose clocks
// differ still agree on them.
import { createHash } from 'node:crypto'
import type Keyv from 'keyv'
import { guarded } from '../recovery/store/guard.js'
import { RedisLink } from '../recovery/store/redis-link.js'
import type { OwnerUsage } from '../types.js'
import { type CheckResult, type CounterLimits, type Counters, type LimitName, NO_RESERVATION, type Reservation } from './counters.js'

/**
 * ARGV[1] is the step. `check` (ARGV[2..4]: request, token and nano-dollar limits, -1 for none) first adds the
 * charges folded into it (ARGV[5..6]: tokens, nano-dollars), then counts a request and adds the call's reservation
 * (ARGV[7..8]) unless a limit is reached; it answers the counts it checked, before the reservation. `charge`
 * (ARGV[2..3]: tokens, nano-dollars, negative to give back a reservation) adds calls' usage; `read` changes
 * nothing. A count never goes below 0. Every amount is a whole number within the bounds the ledger takes, so
 * HINCRBY never refuses one halfway through a step.
 */
export const LEDGER_SCRIPT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minute = math.floor(ms / 60000)
local day = math.floor(ms / 86400000)
local key = KEYS[1]
local v = redis.call('HMGET', key, 'm', 'r', 't', 'd', 'c')
local requests, tokens, cost = 0, 0, 0
local sameMinute = tonumber(v[1]) == minute
local sameDay = tonumber(v[4]) == day
if sameMinute then requests = tonumber(v[2]) or 0; tokens = tonumber(v[3]) or 0 end
if sameDay then cost = tonumber(v[5]) or 0 end
local step = ARGV[1]
if step == 'read' then return {'', requests, tokens, cost, 0, 0} end
if not sameMinute then redis.call('HSET', key, 'm', minute, 'r', 0, 't', 0) end
if not sameDay then redis.call('HSET', key, 'd', day, 'c', 0) end
local function add(field, by, count)
  if by == '0' then return count end
  local n = redis.call('HINCRBY', key, field, by)
  if n < 0 then redis.call('HSET', key, field, 0); n = 0 end
  return n
end
local over = ''
if step == 'check' then
  tokens = add('t', ARGV[5], tokens)
  cost = add('c', ARGV[6], cost)
  local rpm, tpm, cpd = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  if cpd >= 0 and cost >= cpd then over = 'cost'
  elseif rpm >= 0 and requests >= rpm then over = 'requests'
  elseif tpm >= 0 and tokens >= tpm then over = 'tokens' end
  if over == '' then
    requests = redis.call('HINCRBY', key, 'r', 1)
    add('t', ARGV[7], tokens)
    add('c', ARGV[8], cost)
  end
else
  tokens = add('t', ARGV[2], tokens)
  cost = add('c', ARGV[3], cost)
end
local dayLeft = 86400000 - ms % 86400000
redis.call('PEXPIRE', key, dayLeft + 60000)
return {over, requests, tokens, cost, 60000 - ms % 60000, dayLeft}
`

const SCRIPT_SHA = createHash('sha1').update(LEDGER_SCRIPT).digest('hex')

/** The script commands of a node-redis v5 client or cluster (a cluster routes them by the first key). */
interface ScriptClient {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
}

/**
 * How long charges are held back before they are sent on their own: a busy owner's next check comes sooner and
 * carries them, so its calls pay one round trip each; other processes see them at most this much later.
 */
const CHARGE_HOLD_MS = 20

/** The longest a limit step waits for Redis: a call must not hang on a store that stopped answering. */
const STEP_TIMEOUT_MS = 2000

/** Charges of one owner not yet sent: folded into its next check, or sent together once held long enough. */
interface Unsent {
  tokens: number
  cost: number
  /** Settles the promises of the charges it holds, once they landed or failed. */
  landed: Array<{ resolve: () => void; reject: (error: unknown) => void }>
}

/**
 * The counters kept in the Redis behind a Keyv on @keyv/redis. Charges are not sent one by one: those of one owner
 * are summed, and ride on that owner's next check when one comes within `CHARGE_HOLD_MS`, else go as one `charge`
 * step. A busy owner's calls then pay about one round trip each, not two.
 */
export class RedisCounters implements Counters {
  readonly #link: RedisLink
  readonly #unsent = new Map<string, Unsent>()
  #flushing = false

  constructor(keyv: Keyv, onError: (error: unknown) => void) {
    this.#link = new RedisLink(keyv, { waitMs: STEP_TIMEOUT_MS, onError })
  }

  /** The owner's hash, behind the Keyv's prefixes; the braces make the owner the cluster hash tag. */
  key(owner: string): string {
    return this.#link.key(`ledger:{${owner}}`)
  }

  /** One run of the script: EVALSHA, and EVAL (which loads it) when this Redis has not seen it yet. */
  #run(owner: string, args: string[]): Promise<unknown[]> {
    return guarded(`ledger ${args[0]}`, STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const client = this.#link.client as unknown as ScriptClient
      const options = { keys: [this.key(owner)], arguments: args }
      try {
        return (await client.evalSha(SCRIPT_SHA, options)) as unknown[]
      } catch (error) {
        if (!String((error as { message?: unknown })?.message ?? error).startsWith('NOSCRIPT')) throw error
        return (await client.eval(LEDGER_SCRIPT, options)) as unknown[]
      }
    })
  }

  async check(owner: string, limits: CounterLimits, reserve: Reservation = NO_RESERVATION): Promise<CheckResult> {
    const folded = this.#unsent.get(owner)
    if (folded) this.#unsent.delete(owner)
    const args = ['check', String(limits.requests), String(limits.tokens), String(limits.cost)]
    args.push(String(folded?.tokens ?? 0), String(folded?.cost ?? 0), String(reserve.tokens), String(reserve.cost))
    let reply: unknown[]
    try {
      reply = await this.#run(owner, args)
    } catch (error) {
      if (folded) settle(folded, error)
      throw error
    }
    if (folded) settle(folded, undefined)
    const usage = usageOf(reply)
    return {
      over: (reply[0] === '' ? undefined : reply[0]) as LimitName | undefined,
      ...usage,
      minuteResetMs: Number(reply[4]),
      dayResetMs: Number(reply[5]),
    }
  }

  charge(owner: string, tokens: number, cost: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let unsent = this.#unsent.get(owner)
      if (!unsent) {
        unsent = { tokens: 0, cost: 0, landed: [] }
        this.#unsent.set(owner, unsent)
      }
      unsent.tokens += tokens
      unsent.cost += cost
      unsent.landed.push({ resolve, reject })
      if (!this.#flushing) {
        this.#flushing = true
        setTimeout(() => this.#flush(), CHARGE_HOLD_MS)
      }
    })
  }

  /** Sends every charge no check took, one step per owner. */
  #flush(): void {
    this.#flushing = false
    for (const [owner, unsent] of this.#unsent) {
      this.#run(owner, ['charge', String(unsent.tokens), String(unsent.cost)]).then(
        () => settle(unsent, undefined),
        (error: unknown) => settle(unsent, error),
      )
    }
    this.#unsent.clear()
  }

  async usage(owner: string): Promise<OwnerUsage> {
    // Charges held back are the owner's too: sent now, the step's answer is the counts with them.
    const unsent = this.#unsent.get(owner)
    if (!unsent) return usageOf(await this.#run(owner, ['read']))
    this.#unsent.delete(owner)
    try {
      const reply = await this.#run(owner, ['charge', String(unsent.tokens), String(unsent.cost)])
      settle(unsent, undefined)
      return usageOf(reply)
    } catch (error) {
      settle(unsent, error)
      throw error
    }
  }
}

/** Tells the charges a step carried how it went. */
function settle(unsent: Unsent, error: unknown): void {
  for (const one of unsent.landed) error === undefined ? one.resolve() : one.reject(error)
}

function usageOf(reply: unknown[]): OwnerUsage {
  return { requests: Number(reply[1]), tokens: Number(reply[2]), cost: Number(reply[3]) }
}
