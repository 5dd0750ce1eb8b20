// What a running background call is, apart from its log: who it is and where it is kept, its bounds, and who reads
// its events here.
import type { BackgroundFormat } from '../dialects/index.js'
import type { GatewayStore } from '../store/gateway-store.js'

/** Someone reading a running call's events here: told each new one, and the end. */
export interface RunReader {
  event(sse: string): void
  end(): void
}

/** The bounds and lifetimes of one call. */
export interface RunLimits {
  /** How long the call's state is kept. */
  ttlMs: number
  /** How long a lease lasts; it is renewed three times within it. */
  leaseMs: number
  maxEvents: number
  maxBytes: number
}

/** Who a call is and where it is kept. */
export interface RunIdentity {
  owner: string
  requestId: string
  /** Its public id. */
  id: string
  format: BackgroundFormat
  store: GatewayStore
  onError: (error: unknown) => void
}
