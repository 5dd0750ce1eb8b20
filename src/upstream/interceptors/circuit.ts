import type { ResolvedUpstream } from '../../config/resolve.js'
import { GatewayError } from '../../errors.js'
import { channels } from '../../observe/channels.js'
import type { UpstreamResponse } from '../send.js'
import type { UpstreamInterceptor } from './compose.js'
import { authorizerFailed, neverSent } from './fallback.js'

/** Answers that count against an upstream's health: it is failing or overloaded. */
const UNHEALTHY = new Set([429, 500, 502, 503, 504, 529])

/** The cause code of a call refused by an open circuit: nothing was sent, so a fallback may take it. */
export const CIRCUIT_OPEN = 'CIRCUIT_OPEN'

/** Where one upstream's circuit stands. */
export type CircuitState = 'closed' | 'open' | 'half-open'

/** One upstream's circuit: open after `failures` failures in a row, then one probe per `cooldownMs`. */
class Circuit {
  state: CircuitState = 'closed'
  #failures = 0
  #openedAt = 0
  #probing = false

  constructor(private readonly settings: { failures: number; cooldownMs: number }) {}

  /** Whether a call may go now; in half-open, only one probe at a time. */
  admit(): boolean {
    if (this.state === 'closed') return true
    if (this.state === 'open' && Date.now() - this.#openedAt < this.settings.cooldownMs) return false
    if (this.#probing) return false
    this.state = 'half-open'
    this.#probing = true
    return true
  }

  /** Lets another probe go without an outcome: the call never reached the upstream (its credentials failed). */
  release(): void {
    this.#probing = false
  }

  /** Records an outcome; returns the new state when it changed. */
  record(healthy: boolean): CircuitState | undefined {
    const before = this.state
    this.#probing = false
    if (healthy) {
      this.#failures = 0
      this.state = 'closed'
    } else if (this.state === 'half-open' || ++this.#failures >= this.settings.failures) {
      this.state = 'open'
      this.#openedAt = Date.now()
    }
    return this.state === before ? undefined : this.state
  }
}

/**
 * A circuit per upstream: after `circuit.failures` failed calls in a row (unreachable, or 429/5xx), calls to it fail
 * at once for `circuit.cooldownMs` (so its fallbacks answer without waiting for a connect timeout), then one probe
 * call decides. Changes are published on `model-gateway:upstream:circuit`; `states()` is the current picture.
 */
export function circuitBreaker(gatewayId: string) {
  // By name: an upstream's models that speak different dialects (`forModel` variants) share its one circuit.
  const circuits = new Map<string, Circuit>()
  const circuitOf = (upstream: ResolvedUpstream) => {
    let circuit = circuits.get(upstream.name)
    if (!circuit) {
      circuit = new Circuit(upstream.circuit)
      circuits.set(upstream.name, circuit)
    }
    return circuit
  }
  const report = (upstream: ResolvedUpstream, state: CircuitState | undefined) => {
    if (state !== undefined && channels.upstreamCircuit.hasSubscribers) {
      channels.upstreamCircuit.publish({ gatewayId, upstream: upstream.name, state })
    }
  }
  // Reactions rather than an async frame: every call passes through here, and an await costs it a frame and a turn.
  const interceptor: UpstreamInterceptor = (next) => (request) => {
    const { upstream } = request.model
    const circuit = circuitOf(upstream)
    const before = circuit.state
    const admitted = circuit.admit()
    if (circuit.state !== before) report(upstream, circuit.state)
    if (!admitted) {
      const error = new GatewayError('upstream_unreachable', 'The upstream model is failing; the gateway is giving it a rest.', {
        cause: Object.assign(new Error('circuit open'), { code: CIRCUIT_OPEN }),
      })
      return Promise.reject(error)
    }
    return next(request).then(
      (response: UpstreamResponse) => {
        report(upstream, circuit.record(!UNHEALTHY.has(response.statusCode)))
        return response
      },
      (error: unknown) => {
        // A timeout or a broken connection says little about the upstream's health (the model may be slow); the
        // gateway's own credentials failing says nothing of it at all.
        if (authorizerFailed(error)) circuit.release()
        else report(upstream, circuit.record(!neverSent(error)))
        throw error
      },
    )
  }
  return {
    interceptor,
    /** Each upstream's circuit, by name (upstreams never called yet are closed). */
    states(upstreams: Iterable<ResolvedUpstream>): Record<string, CircuitState> {
      const out: Record<string, CircuitState> = {}
      for (const upstream of upstreams) out[upstream.name] = circuits.get(upstream.name)?.state ?? 'closed'
      return out
    },
  }
}
