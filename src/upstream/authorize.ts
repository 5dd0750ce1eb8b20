import type { Readable } from 'node:stream'

/** One upstream request as it goes on the wire, handed to its upstream's authorizer just before it is sent. */
export interface OutgoingRequest {
  readonly method: string
  /** `https://host[:port]`, as undici dispatches it. */
  readonly origin: string
  /** The path with its query, exactly as sent. */
  readonly path: string
  /** undici's flat `[name, value, …]` list, lower-case names; an authorizer appends what it adds. */
  headers: string[]
  /** The exact bytes sent: an authorizer may sign them, never change them. */
  readonly body: Buffer
}

/**
 * Adds an upstream's credentials to a request about to be sent: signs its exact bytes (SigV4) or adds a token it
 * keeps fresh. Credentials are fetched and refreshed off the call path (see `RefreshingValue`); a failure rejects with
 * a GatewayError `upstream_auth_failed` (502: the gateway's credentials failed, not the caller's).
 */
export interface UpstreamAuthorizer {
  authorize(request: OutgoingRequest): Promise<void> | void
  /** The upstream refused the credentials a call carried (401/403): a kept token is dropped, the next call fetches one. @default nothing */
  refused?(): void
}

/**
 * Turns the body of one streamed upstream answer in its own framing (AWS event stream) into the SSE bytes the gateway
 * relays, journals and keeps: every later stage works on SSE events, whatever the upstream's framing.
 */
export type FramingReader = (body: Readable) => Readable
