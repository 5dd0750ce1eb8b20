/**
 * Translation between wire formats, through a hub.
 *
 * Each dialect folder holds its formats' readers and writers (`dialects/openai/chat-completions/`,
 * `dialects/gemini/generate-content/`): they read requests, answers, errors and stream events into the neutral model
 * of `hub.ts` and write them back out of it, so a new format costs one reader and one writer rather than one
 * translator per pair. A `Translator` is a reader of one format joined to a writer of another (`joinFormats`);
 * same-format calls get none and stay byte-exact passthrough. A Responses call to an OpenAI upstream is passthrough;
 * an OpenAI upstream configured with `api: 'responses'` gets calls of other dialects written as Responses requests
 * (for models only that API serves). This folder holds only the hub and the machinery no dialect owns.
 *
 * Use from the call pipeline:
 * - `translatorFor(inbound, outbound, operation, api)` (the dialect registry): undefined when both are the same dialect.
 * - `request(fields, call)`: the upstream body and the call's `CallPlan`, or `{ ok: false, field, message }` for a
 *   400 naming the field (the client's own field path, e.g. `messages[2].tool_call_id`).
 * - `response(body, plan)`: a 2xx upstream answer in the client's format; a failure means the upstream sent
 *   something that is not its format (a 502).
 * - `error(status, body)`: an upstream error body in the client's format; the status is kept as it is.
 * - `stream(plan)`: a `StreamTranslator`; feed it the upstream's bytes with `write` as they arrive (or parsed
 *   SSE `data` with `event`), write what it returns to the client, call `end` when the upstream ends (or `fail`
 *   when it broke off). Its `usage()` gives the upstream's token counts whatever the client asked to see.
 *
 * Rules the mapping keeps:
 * - Each request object a reader takes is described once (`payload.ts`): its members with their readers. The set
 *   of members translation accepts, the operation's `readFields` and the wire type all derive from that list.
 * - Readers refuse, by field, whatever the hub cannot hold: unknown fields, and values no other format can express.
 *   A member some formats have and others lack (a seed, top-k, a single tool call, JSON without a schema) is held
 *   with the client's own path for it (`HubRequest.fields`), and the writer whose format lacks it refuses that path;
 *   one that only tunes sampling or what the answer shows (top-k, a temperature Anthropic refuses with thinking on,
 *   thought summaries) it drops and names instead, unless the call is strict (`translation.strict`, `dropOrRefuse`).
 * - A thinking budget above the target model's maximum is lowered to it and named in `HubRequest.clamped`, which the
 *   call answers as `x-model-gateway-clamped`.
 * - Hint fields are never refused and never dropped in silence: a member that only hints the provider (a cache key,
 *   metadata, a storage flag, a cache breakpoint, context management, a web search offered to the model) is left
 *   out and named by its path in `HubRequest.dropped`, which the call answers as `x-model-gateway-dropped`. A cache
 *   breakpoint is also held as a `HubCachePoint`: a writer whose format has them (Messages, Converse) places it and
 *   takes its name back.
 * - Nothing else is dropped, except what changes nothing the model says: Gemini's thought signatures toward a chat
 *   or Messages upstream, `additionalProperties: false` toward Gemini's schema subset (Gemini never adds undeclared
 *   properties), a `json_schema` name (a label; Gemini and Messages have no field for it), another model's
 *   reasoning toward a model of another format (providers leave an earlier turn's reasoning out of what the model
 *   reads), a tool result's error flag toward chat (the result's text says it).
 * - Answers cannot be refused, so their words without a match are mapped to the nearest: Gemini's finish reasons
 *   that mean withheld content become `content_filter`, the others (OTHER, MALFORMED_FUNCTION_CALL, …) `stop`; a
 *   chat refusal becomes text; Gemini thought summaries (sent only when asked, which no translated request does) are left out;
 *   Anthropic's `refusal` stop is `content_filter`, `pause_turn` an end the others have no word for.
 * - Usage: Gemini input = promptTokenCount + toolUsePromptTokenCount, output = candidatesTokenCount +
 *   thoughtsTokenCount; chat completion tokens already include reasoning tokens; Anthropic input = input_tokens +
 *   cache_read_input_tokens + cache_creation_input_tokens, the cache's two counts kept apart.
 * - Schemas go to Gemini as its OpenAPI subset when that says the same, else whole as JSON Schema
 *   (`parametersJsonSchema`, `responseJsonSchema`); see `dialects/gemini/schema.ts`.
 * - Tool call ids: a chat id is kept as the Gemini call's `id`; a Gemini call without one gets
 *   `call_<responseId>_<candidate>_<n>` (in a request, `call_<content>_<part>`), so the same answer always gets
 *   the same ids and a client's history maps each result back to its call. Chat tool messages find their function
 *   name through the nearest earlier call with their id; Gemini function responses find their call by id, else by
 *   name in order, within the model turn before them.
 * - Signatures and reasoning a client's format has no field for ride in the one it sends back (`carry.ts`): a
 *   Gemini thought signature in a chat tool call's `extra_content.google.thought_signature` (where Google's
 *   OpenAI-compatible API puts it), in a Responses reasoning item's `encrypted_content`, in a Messages thinking
 *   block's `signature`; an Anthropic thinking block in a Gemini part's `thoughtSignature`, a Responses reasoning
 *   item or a chat tool call. The client sends it back and the reader restores it.
 */

import type { CallPlan, ClientFormat, UpstreamFormat } from './format.js'
import { attempt, type JsonObject, parseJson, type Translated } from './readers.js'
import { StreamTranslator } from './stream.js'

export type { CallPlan } from './format.js'
export type * from './hub.js'
export type { Translated } from './readers.js'
export { StreamTranslator } from './stream.js'

/** A call as the pipeline knows it before its request is translated: its plan's own members, `created` defaulting to now. */
export type CallInfo = Pick<CallPlan, 'model' | 'upstreamModel' | 'stream' | 'requestId'> &
  Partial<Pick<CallPlan, 'created' | 'maxOutputTokens' | 'strict'>>

/** A translated request: the body to send upstream (serialise it as JSON) and the plan the answer is translated with. */
export interface TranslatedRequest {
  body: object
  plan: CallPlan
}

/** Translation from one client format to one upstream format. */
export interface Translator {
  /** The client's request body (parsed) for the upstream. */
  request(fields: JsonObject, call: CallInfo): Translated<TranslatedRequest>
  /** An upstream 2xx body (its bytes, or already parsed) for the client. */
  response(body: unknown, plan: CallPlan): Translated<object>
  /**
   * An upstream error body (its bytes, its text, or parsed JSON) for the client; the status stays the upstream's.
   * `requestId` is the call's, for a format whose error bodies carry it.
   */
  error(status: number, body: unknown, requestId?: string): object
  /** A translator for the upstream's event stream. */
  stream(plan: CallPlan): StreamTranslator
}

/** The translator that reads a client's requests with `from` and writes them for an upstream with `to`. */
export function joinFormats(from: ClientFormat, to: UpstreamFormat): Translator {
  return {
    request(fields, call) {
      return attempt(() => {
        const hub = from.requestToHub(fields)
        const plan: CallPlan = {
          model: call.model,
          upstreamModel: call.upstreamModel,
          stream: call.stream,
          includeUsage: hub.includeUsage,
          requestId: call.requestId,
          created: call.created ?? Math.floor(Date.now() / 1000),
          request: fields,
        }
        if (call.maxOutputTokens !== undefined) plan.maxOutputTokens = call.maxOutputTokens
        if (call.strict === true) plan.strict = true
        // The writer drops (or clamps) what its target lacks too: both lists are complete once it has written.
        const body = to.requestFromHub(hub, plan)
        if (hub.dropped.length > 0) plan.dropped = hub.dropped
        if (hub.clamped.length > 0) plan.clamped = hub.clamped
        return { body, plan }
      })
    },
    response(body, plan) {
      const parsed = Buffer.isBuffer(body) ? parseJson(body.toString('utf8')) : body
      return attempt(() => from.responseFromHub(to.responseToHub(parsed, plan), plan))
    },
    error(status, body, requestId) {
      const text = Buffer.isBuffer(body) ? body.toString('utf8') : body
      const error = to.errorToHub(typeof text === 'string' ? (parseJson(text) ?? text) : text)
      return from.errorFromHub(status, error, requestId)
    },
    stream: (plan) => new StreamTranslator(to.streamDecoder(plan), from.streamEncoder(plan)),
  }
}
