import type { BackgroundCalls } from './background/calls.js'
import type { ByteBudget } from './byte-budget.js'
import type { ResolvedOptions } from './config/resolve.js'
import type { ConsoleHooks } from './console/hooks.js'
import type { BodyBudget } from './http/body-budget.js'
import type { Deadline } from './http/deadlines.js'
import type { KeepAliveSweeper } from './http/keep-alive.js'
import type { BodyLimits } from './http/read-body.js'
import type { JoinableCalls } from './idempotency/joinable-calls.js'
import type { RecentAnswers } from './idempotency/recent-answers.js'
import type { Ledger } from './ledger/ledger.js'
import type { NanoPrices } from './ledger/pricing.js'
import type { TokenCountCheck } from './ledger/tokens.js'
import type { PendingWrites } from './recovery/pending.js'
import type { FollowableCalls } from './recovery/stream/followable-calls.js'
import type { GatewayStore } from './store/gateway-store.js'
import type { KeyRedaction } from './upstream/redact.js'
import type { Send } from './upstream/send.js'

/** What every handler of one gateway shares. */
export interface Runtime {
  /** The gateway's id, carried by every diagnostics message. */
  readonly id: string
  readonly options: ResolvedOptions
  /** Sends one upstream request through the gateway's interceptors. */
  readonly send: Send
  readonly store: GatewayStore
  /** Writes the store refused while down (records, keys' outcomes), held to be made when it is back. */
  readonly pendingWrites: PendingWrites
  /** Takes the gateway's own upstream keys out of whatever an upstream sends back. */
  readonly redaction: KeyRedaction
  /** How request bodies are bounded, from `limits` and `timeouts`. */
  readonly bodyLimits: BodyLimits
  /** How long a client may take no bytes (`write`), and how long a finished whole answer's connection is watched for a reset. */
  readonly clientDeadlines: { readonly write: Deadline; readonly lateReset: Deadline }
  /** Stream bytes held for resumes, joins and records, all streams together (`recovery.maxHeldStreamBytes`). */
  readonly heldStreams: ByteBudget
  /** Request-body bytes held at once, gateway-wide and per owner. */
  readonly bodyBudget: BodyBudget
  /** Each upstream's circuit state, by name. */
  readonly circuits: () => Record<string, 'closed' | 'open' | 'half-open'>
  /** What repeated calls are served from: the calls running here, and recent answers. */
  readonly repeats: { readonly joinable: JoinableCalls; readonly recent: RecentAnswers }
  /** The calls of this process a resume can follow or a cancel can stop, by request id. */
  readonly followable: FollowableCalls
  /** Keeps quiet streams alive (`keepAlive.streamMs`); undefined when that is 0. */
  readonly keepAlive: KeepAliveSweeper | undefined
  /** Each owner's limits and counters; undefined without `limits.owners` (then no call touches a store for it). */
  readonly ledger: Ledger | undefined
  /** `pricing` by model id, in nano-dollars per million tokens; undefined without it. */
  readonly prices: ReadonlyMap<string, NanoPrices> | undefined
  /** Keeps the token counts upstreams report whole and bounded before they are priced, charged or reported. */
  readonly tokenCheck: TokenCountCheck
  /** The background calls this process runs. */
  readonly background: BackgroundCalls
  /** What the console is told of calls; undefined when it is off (then nothing is told, kept or timed for it). */
  readonly console: ConsoleHooks | undefined
}
