import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'

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
  /**
   * What it is sent through: the upstream's dispatcher or the gateway's, behind the gateway's interceptors. An
   * authorizer that fetches its credentials over HTTP sends those requests the same way (proxy, TLS, egress rules).
   */
  readonly dispatcher: Dispatcher
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

/**
 * Reads an upstream's error answers whose status and body do not say alone what went wrong (Bedrock's: the error's
 * type in `x-amzn-errortype`, the body `{ message }`): they become the status and error body of the dialect whose
 * answers its upstream gives, before any later stage reads them.
 */
export interface UpstreamErrorReader {
  /** The status a client is answered with for an error answer of `status` with these headers. */
  status(status: number, headers: IncomingHttpHeaders): number
  /** The error body in the shape the upstream's answers are read in; `status` is the one `status` returned. */
  body(status: number, headers: IncomingHttpHeaders, body: Buffer): Buffer
  /** Why the upstream refused the gateway's credentials, for the operator's log: the upstream's reason, never a secret. */
  cause(headers: IncomingHttpHeaders, body: Buffer): string | undefined
}
