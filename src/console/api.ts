// The console's own JSON endpoints: what the page needs beyond the public ones (an owner's background responses,
// its running calls live, its usage by day, its limits), and the admin view. Same key check as the API: the key
// comes in the `authorization` header, never in a URL.
import type { ServerResponse } from 'node:http'
import type { CounterLimits } from '../ledger/counters.js'
import { answeredLimits } from '../ledger/limits.js'
import type { Runtime } from '../runtime.js'
import type { BackgroundList } from './background-list.js'
import type { DailyUsage, DayTotals } from './daily-usage.js'
import type { LiveCall, LiveCalls } from './live-calls.js'

/** Who a console request comes from: an owner (an API key), an admin (an admin key), or both. */
export interface ConsoleCaller {
  owner: string | undefined
  admin: boolean
}

/** What the endpoints read. */
export interface ConsoleParts {
  rt: Runtime
  calls: LiveCalls
  usage: DailyUsage
  background: BackgroundList
  usageDays: number
  /** The owner's usage in its current windows (`gateway.usage`). */
  windows: (owner: string) => Promise<{ requests: number; tokens: number; cost: number }>
}

/** Headers of every console JSON answer: never cached, never sniffed. */
export const JSON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
}

/** Answers JSON. */
export function sendConsoleJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** A console error: `{ error: { code, message } }`. */
export function sendConsoleError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  sendConsoleJson(res, status, { error: { code, message } })
}

/** What an owner's page needs of its calls, without the owner id of anyone else. */
function shownCalls(calls: LiveCall[], withOwner: boolean): Array<Partial<LiveCall>> {
  return calls.map(({ owner, ...call }) => (withOwner ? { owner, ...call } : call))
}

/** One owner's limits as the page shows them: USD, requests and tokens per minute; undefined: none. */
async function limitsOf(rt: Runtime, owner: string): Promise<CounterLimits | undefined> {
  const configured = rt.options.ownerLimits?.owners
  if (!configured) return undefined
  if ('fixed' in configured) return configured.fixed
  return answeredLimits(await configured.of(owner))
}

/** Nano-dollars as a decimal USD string, exact (money is shown with at least two decimals). */
export function usd(nano: number): string {
  const sign = nano < 0 ? '-' : ''
  const abs = BigInt(Math.abs(Math.round(nano)))
  const whole = abs / 1_000_000_000n
  const fraction = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '')
  return `${sign}${whole}.${fraction.padEnd(2, '0')}`
}

const total = (days: DayTotals[]) =>
  days.reduce((sum, day) => ({ requests: sum.requests + day.requests, tokens: sum.tokens + day.tokens, cost: sum.cost + day.cost }), {
    requests: 0,
    tokens: 0,
    cost: 0,
  })

/** `GET api/usage`: the owner's days, today, its limits and what remains of them now. */
export async function usageBody(parts: ConsoleParts, owner: string): Promise<Record<string, unknown>> {
  const [days, windows, limits] = await Promise.all([parts.usage.days(owner), parts.windows(owner), limitsOf(parts.rt, owner)])
  const today = new Date().toISOString().slice(0, 10)
  const remaining =
    limits &&
    Object.fromEntries(
      (
        [
          ['requestsPerMinute', limits.requests, windows.requests],
          ['tokensPerMinute', limits.tokens, windows.tokens],
          ['costPerDay', limits.cost, windows.cost],
        ] as const
      )
        .filter(([, limit]) => limit >= 0)
        .map(([name, limit, used]) => [
          name,
          name === 'costPerDay'
            ? { limit: usd(limit), used: usd(used), remaining: usd(Math.max(0, limit - used)) }
            : { limit, used, remaining: Math.max(0, limit - used) },
        ]),
    )
  return {
    usageDays: parts.usageDays,
    today: days.find((day) => day.day === today) ?? { day: today, requests: 0, tokens: 0, cost: 0 },
    days: days.map((day) => ({ ...day, costUsd: usd(day.cost) })),
    total: total(days),
    // `gateway.usage(owner)`: the windows the limits count in (requests and tokens this minute, cost today).
    windows: { ...windows, costUsd: usd(windows.cost) },
    limits: remaining ?? null,
  }
}

/** `GET api/admin`: every owner's usage and cost, the models with their upstreams and circuits, every running call. */
export async function adminBody(parts: ConsoleParts): Promise<Record<string, unknown>> {
  const { rt } = parts
  const owners = await parts.usage.owners()
  const byOwner = await Promise.all(
    owners.map(async (owner) => {
      const days = await parts.usage.days(owner)
      const sum = total(days)
      return { owner, ...sum, costUsd: usd(sum.cost), days }
    }),
  )
  byOwner.sort((a, b) => b.cost - a.cost || b.requests - a.requests)
  const circuits = rt.circuits()
  const models = [...rt.options.models.values()].map((model) => ({
    id: model.id,
    upstream: model.upstream.name,
    type: model.upstream.dialect.name,
    upstreamModel: model.upstreamModel,
    circuit: circuits[model.upstream.name] ?? 'closed',
    fallbacks: model.fallbacks.map((fallback) => fallback.id),
  }))
  return { usageDays: parts.usageDays, owners: byOwner, models, calls: shownCalls(parts.calls.list(), true) }
}

/** `GET api/calls`: the caller's running calls, or (an admin asking `?all=true`) every owner's. */
export function callsBody(parts: ConsoleParts, caller: ConsoleCaller, all: boolean): Record<string, unknown> {
  if (all && caller.admin) return { items: shownCalls(parts.calls.list(), true) }
  return { items: caller.owner === undefined ? [] : shownCalls(parts.calls.list(caller.owner), false) }
}
