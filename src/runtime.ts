import type { Agent } from 'undici'
import type { ResolvedOptions } from './config/resolve.js'
import type { InFlightBudget } from './http/in-flight.js'
import type { BodyLimits } from './http/read-body.js'
import type { RecentAnswers } from './idempotency/recent-answers.js'
import type { RunningCalls } from './idempotency/running-calls.js'
import type { RecoveryStore } from './recovery/store/recovery-store.js'
import type { LiveCalls } from './recovery/stream/live-calls.js'
import type { KeyRedaction } from './upstream/redact.js'
import type { Send } from './upstream/send.js'

/** What every handler of one gateway shares. */
export interface Runtime {
  /** The gateway's id, carried by every diagnostics message. */
  readonly id: string
  readonly options: ResolvedOptions
  /** The connection pool to every upstream. */
  readonly agent: Agent
  /** Sends one upstream request through the gateway's interceptors. */
  readonly send: Send
  readonly store: RecoveryStore
  /** Takes the gateway's own upstream keys out of whatever an upstream sends back. */
  readonly redaction: KeyRedaction
  /** How request bodies are bounded, from `limits` and `timeouts`. */
  readonly bodyLimits: BodyLimits
  /** Request-body bytes held at once, gateway-wide and per owner. */
  readonly inFlight: InFlightBudget
  /** Each upstream's circuit state, by name. */
  readonly circuits: () => Record<string, 'closed' | 'open' | 'half-open'>
  /** What repeated calls are served from: the calls running here, and recent answers. */
  readonly repeats: { readonly running: RunningCalls; readonly recent: RecentAnswers }
  /** The calls of this process a resume can follow or a cancel can stop, by request id. */
  readonly live: LiveCalls
}
