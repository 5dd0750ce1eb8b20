// The counters on Redis: one hash per owner, changed by one Lua script, so a check (read, compare, count) is one
// atomic round trip whatever the number of processes. The key holds the owner in a hash tag (`ledger:{owner}`): on
// a cluster, every key of one owner lives in one slot. Windows follow Redis's own clock, so processes whose clocks
// differ still agree on them.
import { createHash } from 'node:crypto'
import type Keyv from 'keyv'
import { guarded } from '../recovery/store/guard.js'
import { RedisLink } from '../recovery/store/redis-link.js'
import type { OwnerUsage } from '../types.js'
import type { CheckResult, CounterLimits, Counters, LimitName } from './counters.js'

/**
 * ARGV[1] is the step: `check` (ARGV[2..4]: request, token and nano-dollar limits, -1 for none) counts a request
 * unless a limit is reached; `charge` (ARGV[2..3]: tokens, nano-dollars) adds a call's usage; `read` changes nothing.
 * Cost is kept with HINCRBY and returned as its string: a Lua number would print a large count in exponent form.
 */
export const LEDGER_SCRIPT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minute = math.floor(ms / 60000)
local day = math.floor(ms / 86400000)
local key = KEYS[1]
local v = redis.call('HMGET', key, 'm', 'r', 't', 'd', 'c')
local requests, tokens, cost = 0, 0, '0'
local sameMinute = tonumber(v[1]) == minute
local sameDay = tonumber(v[4]) == day
if sameMinute then requests = tonumber(v[2]) or 0; tokens = tonumber(v[3]) or 0 end
if sameDay then cost = v[5] or '0' end
local step = ARGV[1]
if step == 'read' then return {'', requests, tokens, cost, 0, 0} end
if not sameMinute then redis.call('HSET', key, 'm', minute, 'r', 0, 't', 0) end
if not sameDay then redis.call('HSET', key, 'd', day, 'c', 0) end
local over = ''
if step == 'check' then
  local rpm, tpm, cpd = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  if cpd >= 0 and tonumber(cost) >= cpd then over = 'cost'
  elseif rpm >= 0 and requests >= rpm then over = 'requests'
  elseif tpm >= 0 and tokens >= tpm then over = 'tokens' end
  if over == '' then requests = redis.call('HINCRBY', key, 'r', 1) end
else
  tokens = redis.call('HINCRBY', key, 't', ARGV[2])
  cost = tostring(redis.call('HINCRBY', key, 'c', ARGV[3]))
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

/** The longest a limit step waits for Redis: a call must not hang on a store that stopped answering. */
const STEP_TIMEOUT_MS = 2000

/** The counters kept in the Redis behind a Keyv on @keyv/redis. */
export class RedisCounters implements Counters {
  readonly #link: RedisLink

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

  async check(owner: string, limits: CounterLimits): Promise<CheckResult> {
    const reply = await this.#run(owner, ['check', String(limits.requests), String(limits.tokens), String(limits.cost)])
    const usage = usageOf(reply)
    return {
      over: (reply[0] === '' ? undefined : reply[0]) as LimitName | undefined,
      ...usage,
      minuteResetMs: Number(reply[4]),
      dayResetMs: Number(reply[5]),
    }
  }

  async charge(owner: string, tokens: number, cost: number): Promise<void> {
    await this.#run(owner, ['charge', String(tokens), String(cost)])
  }

  async usage(owner: string): Promise<OwnerUsage> {
    return usageOf(await this.#run(owner, ['read']))
  }
}

function usageOf(reply: unknown[]): OwnerUsage {
  return { requests: Number(reply[1]), tokens: Number(reply[2]), cost: Number(reply[3]) }
}
