// What each wire format supplies to the hub: a reader and a writer for requests, answers, errors and streams.
// Readers throw `Refusal` (caught once by the translator) so the mapping code stays a plain list of fields.

import type { HubError, HubRequest, HubResponse, HubStreamEvent } from './hub.js'
import type { JsonObject } from './result.js'

/** What a translated call knows besides the bodies, fixed when its request is translated. */
export interface CallPlan {
  /** The model as the client named it: what an answer that names none reports. */
  model: string
  /** The model name the upstream knows, for formats that carry it in the body. */
  upstreamModel: string
  stream: boolean
  /** The client asked for a usage event at the end of its stream. */
  includeUsage: boolean
  /** The gateway's request id: the stable seed of ids an upstream does not supply. */
  requestId: string
  /** Unix seconds of the call, for formats whose answers must carry one. */
  created: number
}

/** Turns one upstream stream event (its SSE `data`) into hub events. */
export interface StreamDecoder {
  event(data: string): HubStreamEvent[]
}

/** Turns the hub events of one upstream event into the SSE `data` payloads of the client's format. */
export interface StreamEncoder {
  events(batch: readonly HubStreamEvent[]): string[]
  /** The payloads still held back when the upstream stream ends (the usage event, `[DONE]`). */
  end(): string[]
}

/** Everything one wire format contributes to translation. */
export interface WireFormat {
  requestToHub(body: JsonObject): HubRequest
  requestFromHub(hub: HubRequest, plan: CallPlan): object
  responseToHub(body: unknown, plan: CallPlan): HubResponse
  responseFromHub(hub: HubResponse, plan: CallPlan): object
  /** Reads an upstream error body (already parsed, or its text when it was not JSON). */
  errorToHub(body: unknown): HubError
  errorFromHub(status: number, error: HubError): object
  streamDecoder(plan: CallPlan): StreamDecoder
  streamEncoder(plan: CallPlan): StreamEncoder
}
