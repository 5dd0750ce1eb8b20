// Bedrock's CountTokens (`POST /model/{id}/count-tokens`), both ways. Its body is `{ input: { invokeModel: { body } } }`
// (the base64 of the InvokeModel body the count is for) or `{ input: { converse: { messages, system, toolConfig,
// additionalModelRequestFields } } }`; its answer `{ inputTokens }`. Upstream, a Claude model's counts go in the
// InvokeModel form (its body is the one InvokeModel would send), every other model's in the Converse form. Its
// clients (the AWS SDK's CountTokensCommand) reach a Converse model passthrough, every other through the hub.
import { invalidField } from '../../errors.js'
import { isObject } from '../../json/value.js'
import type { ClientFormat, UpstreamFormat } from '../../translate/format.js'
import { array, at, type JsonObject, object, onlyKnown, refuse, string } from '../../translate/readers.js'
import type { Operation } from '../../types.js'
import { messagesCountFormat } from '../anthropic/messages/count.js'
import type { CallTarget, OperationFormat } from '../dialect.js'
import { countedHubResponse } from '../shared.js'
import { converseRequestFromHub } from './converse/request.js'
import { converseErrorToHub } from './converse/response.js'
import { ConverseStreamDecoder } from './converse/stream.js'
import { converseRequestToHub } from './converse-client/request.js'
import { converseErrorFromHub } from './converse-client/response.js'
import { ConverseStreamEncoder } from './converse-client/stream.js'

/** The token counts a Bedrock upstream answers at `/count-tokens`: Anthropic's clients', Vertex clients', its own. */
const COUNTS: ReadonlySet<Operation> = new Set(['messages.countTokens', 'vertex.countTokens', 'bedrock.countTokens'])

/** Whether an upstream call of `operation` is a token count (`/model/{id}/count-tokens`). */
export const isCount = (operation: Operation): boolean => COUNTS.has(operation)

/** The members of `input.converse` CountTokens takes (`ConverseTokensRequest`): what changes the prompt's tokens. */
const CONVERSE_COUNTED = ['messages', 'system', 'toolConfig', 'additionalModelRequestFields'] as const

/**
 * The CountTokens body of an InvokeModel body. InvokeModel's Claude body requires `max_tokens`, and Bedrock checks the
 * counted body as InvokeModel would: a count, which has none, gets the least that passes (above a thinking budget),
 * which changes no input token.
 */
export function invokeCountBody(invokeBody: Record<string, unknown>): JsonObject {
  const body = { ...invokeBody }
  if (body.max_tokens === undefined) {
    const thinking = isObject(body.thinking) ? body.thinking : undefined
    const budget = typeof thinking?.budget_tokens === 'number' ? thinking.budget_tokens : 0
    body.max_tokens = budget + 1
  }
  return { input: { invokeModel: { body: Buffer.from(JSON.stringify(body)).toString('base64') } } }
}

/** The `inputTokens` of a CountTokens answer as the hub's input tokens. */
export const countedTokens = (body: unknown) => countedHubResponse(isObject(body) ? body.inputTokens : undefined)

/** Token counting on a Bedrock model that takes Converse: the whole request counted in CountTokens' Converse form. */
export const converseCountFormat: UpstreamFormat = {
  requestFromHub(hub, plan) {
    const whole = converseRequestFromHub(hub, { ...plan, stream: false })
    const converse: JsonObject = {}
    for (const field of CONVERSE_COUNTED) if (whole[field] !== undefined) converse[field] = whole[field]
    return { input: { converse } }
  },
  responseToHub: countedTokens,
  errorToHub: converseErrorToHub,
  streamDecoder: () => new ConverseStreamDecoder(),
}

/** The InvokeModel body a CountTokens request carries, decoded: an object, or the client's 400 naming the field. */
function invokeBodyOf(invoke: JsonObject): JsonObject {
  const path = 'input.invokeModel.body'
  const encoded = string(invoke.body, path)
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))
  } catch {
    decoded = undefined
  }
  if (!isObject(decoded)) refuse(path, `'${path}' must be the base64 of an InvokeModel JSON body.`)
  return decoded
}

/** A CountTokens request's `input`: its one member, checked. */
function inputOf(body: JsonObject): { invokeModel: JsonObject } | { converse: JsonObject } {
  onlyKnown(body, new Set(['input']), '')
  const input = object(body.input, 'input')
  onlyKnown(input, new Set(['invokeModel', 'converse']), 'input')
  if ((input.invokeModel === undefined) === (input.converse === undefined))
    refuse('input', "'input' must have exactly one of 'invokeModel' and 'converse'.")
  if (input.invokeModel !== undefined) return { invokeModel: object(input.invokeModel, 'input.invokeModel') }
  return { converse: object(input.converse, 'input.converse') }
}

/**
 * CountTokens as the client's side of a translated count: an InvokeModel body is read as the Messages body it is (for
 * Claude), a Converse one as Converse; the answer is `{ inputTokens }`.
 */
export const bedrockCountFormat: ClientFormat = {
  requestToHub(body) {
    const input = inputOf(body)
    if ('converse' in input) {
      const converse = input.converse
      onlyKnown(converse, new Set(CONVERSE_COUNTED), 'input.converse')
      array(converse.messages, at('input.converse', 'messages'))
      const hub = converseRequestToHub(converse)
      hub.maxOutputTokens = undefined
      return hub
    }
    // Bedrock's own members of a Claude body: its version, and the betas that Anthropic's API takes in a header.
    const { anthropic_version: _version, anthropic_beta: _betas, ...messages } = invokeBodyOf(input.invokeModel)
    return messagesCountFormat.requestToHub(messages)
  },
  responseFromHub: (hub) => ({ inputTokens: hub.usage?.input ?? 0 }),
  errorFromHub: converseErrorFromHub,
  streamEncoder: (plan) => new ConverseStreamEncoder(plan),
}

/** The model id as the client meant it: the AWS SDK percent-encodes the path's `:` (and an ARN's `/`). */
function decodedId(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    // A malformed escape names no model: left as sent, it matches none.
    return raw
  }
}

/** Checks the shape of a CountTokens body (the hub reader checks its content) and takes the model from the path. */
function read(fields: Record<string, unknown>, fromPath: CallTarget | undefined): CallTarget {
  if (fromPath === undefined) return invalidField('modelId', "'modelId' is read from the path /model/{modelId}/count-tokens.")
  const { input } = fields
  if (!isObject(input)) return invalidField('input', "'input' must be an object with 'invokeModel' or 'converse'.")
  const members = Object.keys(input)
  if (members.length !== 1 || (members[0] !== 'invokeModel' && members[0] !== 'converse'))
    invalidField('input', "'input' must have exactly one of 'invokeModel' and 'converse'.")
  if (isObject(input.invokeModel) && typeof input.invokeModel.body !== 'string')
    invalidField('input.invokeModel.body', "'input.invokeModel.body' must be the base64 of an InvokeModel body.")
  if (!isObject(input.invokeModel) && !isObject(input.converse))
    invalidField(`input.${members[0]}`, `'input.${members[0]}' must be an object.`)
  return { model: decodedId(fromPath.model), stream: false }
}

/**
 * `POST /model/{model}/count-tokens`: free upstream, so an answer its client left is not kept. A model of another
 * format is counted by its upstream's own counting method, where it has one.
 */
export const bedrockCountTokens: OperationFormat = {
  operation: 'bedrock.countTokens',
  otelName: 'count_tokens',
  counting: bedrockCountFormat,
  modelInBody: false,
  readFields: new Set(['input']),
  keepsRecords: false,
  countsTokens: true,
  untranslated: 'token counts',
  read,
}
