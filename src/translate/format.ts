// What each wire format supplies to the hub: a reader and a writer for requests, answers, errors and streams.
// Readers throw `Refusal` (caught once by the translator) so the mapping code stays a plain list of fields.

import type { HubError, HubRequest, HubResponse, HubStreamEvent } from './hub.js'
import type { JsonObject } from './readers.js'

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
  /** The client's request as read, for formats whose answers repeat its settings (a Responses object does). */
  request: JsonObject
  /**
   * The output token limit a format that requires one gets when the client set none: the model's `maxOutputTokens`.
   * @default the writer's own (Messages: 4096)
   */
  maxOutputTokens?: number
  /** The client's fields the translation left out because they only hint the provider, by path. @default none */
  dropped?: readonly string[]
  /** Values the translation lowered to what the target model takes, as `<path>=<value sent>`. @default none */
  clamped?: readonly string[]
  /** Refuse, rather than drop and name, what the target lacks or refuses (`translation.strict`). @default false */
  strict?: boolean
}

/** Turns one upstream stream event (its SSE `data`) into hub events. */
export interface StreamDecoder {
  event(data: string): HubStreamEvent[]
}

/** One client event: its `data`, and its `event` name for formats whose events are typed (Responses). */
export type SseOut = string | { event: string; data: string }

/** Turns the hub events of one upstream event into the SSE events of the client's format. */
export interface StreamEncoder {
  events(batch: readonly HubStreamEvent[]): SseOut[]
  /** The events still held back when the upstream stream ends (the usage event, `[DONE]`, the whole response). */
  end(): SseOut[]
}

/** What a format contributes as the client's side of a call: its requests read, its answers written. */
export interface ClientFormat {
  requestToHub(body: JsonObject): HubRequest
  responseFromHub(hub: HubResponse, plan: CallPlan): object
  /** `requestId` is the gateway's, for a format whose error bodies carry it (Anthropic's `request_id`). */
  errorFromHub(status: number, error: HubError, requestId?: string): object
  streamEncoder(plan: CallPlan): StreamEncoder
  /**
   * A stream of this format (its events' SSE `data`) as the answer the format gives without streaming, for a format
   * whose stream ends with that answer whole (Responses' `response.completed`); formats that also serve as an
   * upstream's are assembled from their events instead.
   */
  assembleStream?(data: readonly string[]): object | undefined
  /** `assembleStream` with turns of the event loop between slices, for a stream that may be large (a kept one). */
  assembleStreamInSlices?(data: readonly string[]): Promise<object | undefined>
}

/** What a format contributes as the upstream's side of a call: requests written, answers read. */
export interface UpstreamFormat {
  requestFromHub(hub: HubRequest, plan: CallPlan): object
  responseToHub(body: unknown, plan: CallPlan): HubResponse
  /** Reads an upstream error body (already parsed, or its text when it was not JSON). */
  errorToHub(body: unknown): HubError
  streamDecoder(plan: CallPlan): StreamDecoder
}

/** A format that serves as either side (chat completions, generate-content, Messages, Responses). */
export type WireFormat = ClientFormat & UpstreamFormat
