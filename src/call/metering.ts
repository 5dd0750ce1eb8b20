// The one gate every call that goes upstream passes, whoever runs it (a client's call, a background response): its
// owner's limits checked and a reservation held before it goes, and what it used priced and settled when it ends.
import { type GatewayError, isGatewayError } from '../errors.js'
import type { CallLease } from '../idempotency/lease.js'
import type { Reservation } from '../ledger/counters.js'
import type { LedgerEntry } from '../ledger/ledger.js'
import { costOf } from '../ledger/pricing.js'
import { MAX_TOKENS_PER_CALL } from '../ledger/tokens.js'
import { callStartMessage, statusSent } from '../observe/call-message.js'
import { type CallRefusedMessage, channels } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import type { TokenCounts } from '../types.js'
import type { CallOutcome } from './answer.js'
import type { CallSpec } from './call-spec.js'

/** Whether a call counts against its owner's limits: token counting is free upstream, and clients (Claude Code) call it often. */
export const metered = (spec: CallSpec): boolean => spec.format.countsTokens !== true

/** Bytes of request a token is reckoned at when a reservation estimates the input (about four for English text and JSON). */
const BYTES_PER_TOKEN = 4

/** The top-level members each dialect names a call's most output tokens by (chat, Responses, Messages). */
const MAX_OUTPUT_FIELDS = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'] as const

/** The most output tokens the request allows, as it says them (Gemini's in `generationConfig`), else its model's. */
function maxOutputOf(spec: CallSpec): number {
  const fields = spec.body.value ?? spec.body.fields
  for (const name of MAX_OUTPUT_FIELDS) {
    const value = fields[name]
    if (typeof value === 'number' && value > 0) return Math.min(Math.ceil(value), MAX_TOKENS_PER_CALL)
  }
  const config = fields.generationConfig
  const gemini = typeof config === 'object' && config !== null ? (config as Record<string, unknown>).maxOutputTokens : undefined
  if (typeof gemini === 'number' && gemini > 0) return Math.min(Math.ceil(gemini), MAX_TOKENS_PER_CALL)
  return spec.model.maxOutputTokens ?? 0
}

/**
 * What a call's admission holds ahead of its use: its input estimated from the request's size and the most output
 * it allows, priced at the requested model's prices. A call cut before its upstream said its usage is charged this.
 */
export function reservationOf(rt: Runtime, spec: CallSpec): Reservation {
  const input = Math.min(Math.ceil(spec.body.bytes.length / BYTES_PER_TOKEN), MAX_TOKENS_PER_CALL)
  const output = maxOutputOf(spec)
  const prices = rt.prices?.get(spec.model.id)
  const counts: TokenCounts = {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    cached_input_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
  }
  return { tokens: input + output, cost: prices ? costOf(prices, counts) : 0 }
}

/**
 * The gate's check, before a call goes upstream: its owner's limits, and the reservation it holds until it settles.
 * Undefined when nothing is metered (no ledger, an owner without limits, a free operation). A refusal is published
 * on `call:refused` and fails the call's lease, so calls that joined it get it too; the rate-limit headers the check
 * saw go on the call's answer.
 */
export async function admitUpstream(rt: Runtime, spec: CallSpec, lease?: CallLease): Promise<LedgerEntry | undefined> {
  const ledger = rt.ledger
  if (!ledger || !metered(spec)) return undefined
  let entry: LedgerEntry | undefined
  try {
    entry = await ledger.admit(spec.owner, reservationOf(rt, spec))
  } catch (error) {
    if (channels.callRefused.hasSubscribers && isRefusal(error)) {
      const message = callStartMessage(rt.id, spec) as CallRefusedMessage
      message.status = statusSent(spec, error.status ?? 429, undefined)
      message.error = error.code
      channels.callRefused.publish(message)
    }
    await lease?.fail(error)
    throw error
  }
  if (entry?.figures) spec.limitHeaders = spec.inbound.rateLimits.headers(entry.figures)
  return entry
}

/** Whether the ledger's error is its refusal of the call (a host's limits function that throws is a 500 instead). */
const isRefusal = (error: unknown): error is GatewayError & { code: CallRefusedMessage['error'] } =>
  isGatewayError(error) && (error.code === 'rate_limit_exceeded' || error.code === 'store_unavailable')

/**
 * The gate's end, once a call has ended: its usage (counts checked, priced by the model that answered) goes on its
 * outcome, and its owner is charged it in place of the reservation. A call cut before its end is charged the larger
 * of what its upstream had said and what was reserved; a call with no answer gives its reservation back. Never throws.
 */
export function settleUpstream(rt: Runtime, spec: CallSpec, outcome: CallOutcome, entry: LedgerEntry | undefined): void {
  let tokens = 0
  let cost = 0
  if (outcome.usage) {
    const model = (outcome.served?.model ?? spec.model).id
    const usage = rt.tokenCheck.checked(outcome.usage, model)
    outcome.usage = usage
    const prices = rt.prices?.get(model)
    if (prices) outcome.cost = costOf(prices, usage)
    tokens = usage.total_tokens
    cost = outcome.cost ?? 0
    if (entry && outcome.incomplete) {
      tokens = Math.max(tokens, entry.reserved.tokens)
      cost = Math.max(cost, entry.reserved.cost)
    }
  }
  if (entry) rt.ledger?.settle(entry, tokens, cost)
  // The console's per-day totals count what the ledger charged, so its today is `gateway.usage`'s.
  rt.console?.charged(spec.owner, tokens, cost)
}
