// How a dialect's background calls look to its clients (OpenAI's Responses `background: true`): the gateway runs and
// keeps them; every shape its clients see is the dialect's.
import type { MemberEdits } from '../json/top-members.js'

/** Where a background call is: running (`queued` until its upstream answers), or how it ended. */
export type BackgroundStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete'

/** How a kept stream event ends its background call, when it does. */
export interface BackgroundEnding {
  status: BackgroundStatus
  /** The call's final object, when the event carries it; else the last one, ended with `message`. */
  object?: Record<string, unknown>
  message?: string
}

/**
 * An operation whose calls a client may ask the gateway to run in the background (OpenAI's Responses
 * `background: true`): the gateway runs them itself, keeps their events, and serves them by id. Every shape the
 * client sees is this format's; the gateway only keeps and orders them.
 */
export interface BackgroundFormat {
  /** Whether a request's fields ask for a background call. */
  asks(fields: Record<string, unknown>): boolean
  /**
   * How the request the gateway sends upstream differs from the client's: the background flag taken out (the gateway
   * keeps the call), streaming on. Declared rather than written as a function, so a large body is edited in its bytes.
   */
  run: MemberEdits
  /** The public id of the call created by the gateway request `requestId`. */
  idOf(requestId: string): string
  /** The gateway request id behind a public id, or undefined when the id is none of the gateway's. */
  requestIdOf(id: string): string | undefined
  /**
   * The object of a call its upstream has not answered yet (`queued`), made from its request. It shows a request's
   * string or array member whole or not at all, reading no more of it than its type: for a large body it is made with
   * a stand-in for each member too big to parse, replaced in its created event by the member's own text.
   */
  pending(id: string, request: Record<string, unknown>, createdAt: number): Record<string, unknown>
  /** The object once its upstream answered (`in_progress`). */
  started(object: Record<string, unknown>): Record<string, unknown>
  /** One upstream event as kept, carrying the call's id, and whether it ends the call; undefined drops it. */
  event(data: Record<string, unknown>, id: string): { event: Record<string, unknown>; ending: BackgroundEnding | undefined } | undefined
  /** The object of a call that ended without its upstream's last word: cancelled, or failed with `message`. */
  ended(object: Record<string, unknown>, status: BackgroundStatus, message: string | undefined): Record<string, unknown>
  /** The event that tells a stream reader how a call the upstream did not finish ended; undefined: the stream just ends. */
  endEvent(object: Record<string, unknown>): Record<string, unknown> | undefined
  /** The event that opens every kept stream, written by the gateway when the call is created. */
  createdEvent(object: Record<string, unknown>): Record<string, unknown>
  /** The call's object an event carries (the created one, an end), if any: the store keeps it there only. */
  objectOf(event: Record<string, unknown>): Record<string, unknown> | undefined
  /** The error message an ended object carries, if any. */
  errorMessage(object: Record<string, unknown>): string | undefined
  /** The answer to a delete. */
  deleted(id: string): unknown
}
