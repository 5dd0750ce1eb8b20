// The counters on Redis: one hash per owner, changed by one Lua script, so a check (read, compare, count) is one
// atomic round trip whatever the number of processes. The key holds the owner in a hash tag (`ledger:{owner}`): on
// a cluster, every key of one owner lives in one slot. Windows follow Redis's own clock, so processes whose clocks
// differ still agree on them.
import { createHash } from 'node:crypto'
import type Keyv from 'keyv'
import { DeadlineSweeper } from '../http/deadlines.js'
import { guardedBy } from '../store/guard.js'
import { RedisLink } from '../store/redis-link.js'
import type { OwnerUsage } from '../types.js'
import { type CheckResult, type CounterLimits, type Counters, type LimitName, NO_RESERVATION, type Reservation } from './counters.js'

/**
 * ARGV[1] is the step. `check` first adds the charges folded into it (ARGV[2..3]: tokens, nano-dollars), then takes
 * one or more checks of this owner in order, five arguments each: request, token and nano-dollar limits (-1 for
 * none), and the call's reservation (tokens, nano-dollars). A check counts a request and adds its reservation unless
 * a limit is reached, and the next check sees it: the same as that many steps run one after another. It answers four
 * members per check (what was reached, and the counts it checked, before its reservation), then the windows' resets.
 * `charge` (ARGV[2..3]: tokens, nano-dollars, negative to give back a reservation) adds calls' usage; `read` changes
 * nothing. A count never goes below 0. The counts are worked out in the script and written back by one HSET (the
 * script runs atomically, so that is the same as counting field by field, for a fraction of Redis's work); the key's
 * expiry is set when its day begins (a key of this day already has it).
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
tokens = math.max(0, tokens + tonumber(ARGV[2]))
cost = math.max(0, cost + tonumber(ARGV[3]))
local out = {}
if step == 'check' then
  for i = 4, #ARGV, 5 do
    local rpm, tpm, cpd = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    local over = ''
    if cpd >= 0 and cost >= cpd then over = 'cost'
    elseif rpm >= 0 and requests >= rpm then over = 'requests'
    elseif tpm >= 0 and tokens >= tpm then over = 'tokens' end
    if over == '' then requests = requests + 1 end
    out[#out + 1] = over
    out[#out + 1] = requests
    out[#out + 1] = tokens
    out[#out + 1] = cost
    if over == '' then
      tokens = tokens + tonumber(ARGV[i + 3])
      cost = cost + tonumber(ARGV[i + 4])
    end
  end
else
  out = {'', requests, tokens, cost}
end
redis.call('HSET', key, 'm', minute, 'r', string.format('%.0f', requests), 't', string.format('%.0f', tokens), 'd', day, 'c', string.format('%.0f', cost))
local dayLeft = 86400000 - ms % 86400000
if not sameDay then redis.call('PEXPIRE', key, dayLeft + 60000) end
out[#out + 1] = 60000 - ms % 60000
out[#out + 1] = dayLeft
return out
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

/** The most checks of one owner one step carries; more wait for the next step. */
const MAX_CHECKS_PER_STEP = 128

/** Charges of one owner not yet sent: folded into its next check, or sent together once held long enough. */
interface Unsent {
  tokens: number
  cost: number
  /** The one promise of every charge it holds (not one per charge: a busy owner sums many), settled once they land or fail. */
  landed: Promise<void>
  resolve: () => void
  reject: (error: unknown) => void
}

/** A check waiting for its step's answer. */
interface Waiting {
  limits: CounterLimits
  reserve: Reservation
  resolve: (result: CheckResult) => void
  reject: (error: unknown) => void
}

/**
 * The counters kept in the Redis behind a Keyv on @keyv/redis. One owner has at most one check step in flight:
 * checks that come meanwhile wait and go together in its next step, which the script runs one after another (so a
 * busy owner's calls share round trips and script runs, and a lone call waits for nothing). Charges are not sent
 * one by one either: those of one owner are summed, and ride on that owner's next check when one comes within
 * `CHARGE_HOLD_MS`, else go as one `charge` step.
 */
export class RedisCounters implements Counters {
  readonly #link: RedisLink
  readonly #unsent = new Map<string, Unsent>()
  /** Per owner with a check step in flight: the checks waiting for the next one. */
  readonly #waiting = new Map<string, Waiting[]>()
  #flushing = false
  /** The last limits sent and their arguments: fixed limits are one object for every call, written once. */
  #lastLimits: { limits: CounterLimits; args: readonly [string, string, string] } | undefined
  /** The deadline of every step: one sweeper, not a timer per step. */
  readonly #deadline = new DeadlineSweeper(STEP_TIMEOUT_MS)

  constructor(keyv: Keyv, onError: (error: unknown) => void) {
    this.#link = new RedisLink(keyv, { waitMs: STEP_TIMEOUT_MS, onError })
  }

  /** The owner's hash, behind the Keyv's prefixes; the braces make the owner the cluster hash tag. */
  key(owner: string): string {
    return this.#link.key(`ledger:{${owner}}`)
  }

  /** One run of the script, within `STEP_TIMEOUT_MS` (on the shared sweeper: no timer per step). */
  #run(owner: string, args: string[]): Promise<unknown[]> {
    return guardedBy(this.#deadline, `ledger ${args[0]}`, () => this.#send(owner, args))
  }

  /** EVALSHA, and EVAL (which loads the script) when this Redis has not seen it yet. */
  async #send(owner: string, args: string[]): Promise<unknown[]> {
    if (!this.#link.readyNow()) await this.#link.ready()
    const client = this.#link.client as unknown as ScriptClient
    const options = { keys: [this.key(owner)], arguments: args }
    try {
      return (await client.evalSha(SCRIPT_SHA, options)) as unknown[]
    } catch (error) {
      if (!String((error as { message?: unknown })?.message ?? error).startsWith('NOSCRIPT')) throw error
      return (await client.eval(LEDGER_SCRIPT, options)) as unknown[]
    }
  }

  check(owner: string, limits: CounterLimits, reserve: Reservation = NO_RESERVATION): Promise<CheckResult> {
    return new Promise((resolve, reject) => {
      const one: Waiting = { limits, reserve, resolve, reject }
      const waiting = this.#waiting.get(owner)
      if (waiting) waiting.push(one)
      else this.#sendChecks(owner, [one])
    })
  }

  #limitArguments(limits: CounterLimits): readonly [string, string, string] {
    const last = this.#lastLimits
    if (last?.limits === limits) return last.args
    const args = [String(limits.requests), String(limits.tokens), String(limits.cost)] as const
    this.#lastLimits = { limits, args }
    return args
  }

  /** Sends one step of the owner's checks (with its charges held back); the checks that came meanwhile go next. */
  #sendChecks(owner: string, checks: Waiting[]): void {
    this.#waiting.set(owner, [])
    const folded = this.#unsent.get(owner)
    if (folded) this.#unsent.delete(owner)
    const args = ['check', String(folded?.tokens ?? 0), String(folded?.cost ?? 0)]
    for (const { limits, reserve } of checks) {
      const [requests, tokens, cost] = this.#limitArguments(limits)
      args.push(requests, tokens, cost, String(reserve.tokens), String(reserve.cost))
    }
    this.#run(owner, args).then(
      (reply) => {
        if (folded) settle(folded, undefined)
        const minuteResetMs = Number(reply[reply.length - 2])
        const dayResetMs = Number(reply[reply.length - 1])
        checks.forEach((one, i) => {
          const at = i * 4
          one.resolve({
            over: (reply[at] === '' ? undefined : reply[at]) as LimitName | undefined,
            requests: Number(reply[at + 1]),
            tokens: Number(reply[at + 2]),
            cost: Number(reply[at + 3]),
            minuteResetMs,
            dayResetMs,
          })
        })
        this.#next(owner, undefined)
      },
      (error: unknown) => {
        if (folded) settle(folded, error)
        for (const one of checks) one.reject(error)
        // Those that waited on the same store are told at once, not sent to wait for it again.
        this.#next(owner, error)
      },
    )
  }

  #next(owner: string, error: unknown): void {
    const waiting = this.#waiting.get(owner) ?? []
    if (waiting.length === 0) {
      this.#waiting.delete(owner)
      return
    }
    if (error !== undefined) {
      this.#waiting.delete(owner)
      for (const one of waiting) one.reject(error)
      return
    }
    const rest = waiting.splice(MAX_CHECKS_PER_STEP)
    this.#sendChecks(owner, waiting)
    if (rest.length > 0) this.#waiting.get(owner)?.push(...rest)
  }

  charge(owner: string, tokens: number, cost: number): Promise<void> {
    let unsent = this.#unsent.get(owner)
    if (!unsent) {
      unsent = newUnsent()
      this.#unsent.set(owner, unsent)
    }
    unsent.tokens += tokens
    unsent.cost += cost
    if (!this.#flushing) {
      this.#flushing = true
      setTimeout(() => this.#flush(), CHARGE_HOLD_MS)
    }
    return unsent.landed
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

/** Charges of one owner about to be held back, with their one promise. */
function newUnsent(): Unsent {
  let resolve!: () => void
  let reject!: (error: unknown) => void
  const landed = new Promise<void>((yes, no) => {
    resolve = yes
    reject = no
  })
  return { tokens: 0, cost: 0, landed, resolve, reject }
}

/** Tells the charges a step carried how it went. */
function settle(unsent: Unsent, error: unknown): void {
  if (error === undefined) unsent.resolve()
  else unsent.reject(error)
}

function usageOf(reply: unknown[]): OwnerUsage {
  return { requests: Number(reply[1]), tokens: Number(reply[2]), cost: Number(reply[3]) }
}
