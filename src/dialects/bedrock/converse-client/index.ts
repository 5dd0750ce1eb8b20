// Bedrock's Converse API served to clients (`POST /model/{model}/converse`, `…/converse-stream`): the AWS SDK's
// BedrockRuntimeClient (ConverseCommand, ConverseStreamCommand) pointed at the gateway. Its route's dialect is a
// variant that speaks the Bedrock dialect's Converse formats: passthrough to a Bedrock model that takes Converse,
// translated through the hub for every other (Claude on Bedrock, OpenAI, Gemini, Anthropic). The model is in the
// path only, never in the body; streams go out as AWS event-stream frames; errors in Bedrock's shape. CountTokens
// (`POST /model/{model}/count-tokens`, ../count.ts) is served by the same variant.
import type { IncomingHttpHeaders } from 'node:http'
import { invalidField } from '../../../errors.js'
import { isObject } from '../../../json/value.js'
import type { CallTarget, Dialect, ModelRoute, OperationFormat } from '../../dialect.js'
import { bearer } from '../../shared.js'
import { bedrockErrorBody, bedrockErrorHeaders } from '../client-errors.js'
import { bedrockCountTokens } from '../count.js'
import { eventStreamClientFraming } from '../event-frame.js'
import { converseClientFormat } from './format.js'
import { CONVERSE_FIELDS } from './request.js'
import { converseFrame, converseStreamErrorEvent } from './stream.js'

/** Checks a Converse body's conversation (Bedrock checks the rest) and takes the model and streaming from the path. */
function read(fields: Record<string, unknown>, fromPath: CallTarget | undefined): CallTarget {
  if (fromPath === undefined) return invalidField('modelId', "'modelId' is read from the path /model/{modelId}/converse.")
  const { messages } = fields
  if (messages !== undefined && !Array.isArray(messages)) invalidField('messages', "'messages' must be an array.")
  if (Array.isArray(messages)) {
    for (let i = 0; i < messages.length; i++) {
      if (!isObject(messages[i])) invalidField(`messages[${i}]`, `'messages[${i}]' must be an object.`)
    }
  }
  return { model: decodedId(fromPath.model), stream: fromPath.stream }
}

/**
 * The model id as the client meant it: the AWS SDK percent-encodes the path's `:` (and an ARN's `/`). It only ever
 * selects a configured model (by id or alias), so decoding it reaches nothing else.
 */
function decodedId(raw: string): string {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/** `POST /model/{model}/converse` and `/converse-stream`: the model and streaming are in the path. */
export const converse: OperationFormat = {
  operation: 'bedrock.converse',
  otelName: 'chat',
  hub: converseClientFormat,
  modelInBody: false,
  readFields: CONVERSE_FIELDS,
  elementFields: ['role'],
  keepsRecords: true,
  read,
  streamErrorEvent: converseStreamErrorEvent,
  framing: eventStreamClientFraming(converseFrame),
}

/** The key of a Bedrock-format client: `x-api-key`, else `Authorization: Bearer` (the AWS SDK's `token`). */
function clientKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key']
  if (typeof header === 'string' && header.trim() !== '') return header.trim()
  return bearer(headers.authorization)
}

/**
 * The routes of Converse clients, served by a variant of `base` (the Bedrock dialect's upstream side) that speaks
 * the registry's Bedrock dialect, `speaks()` (read late: that dialect is the one listing these routes).
 */
export function converseClientRoutes(base: Dialect, speaks: () => Dialect): ModelRoute[] {
  const dialect: Dialect = {
    ...base,
    routes: [],
    get speaks() {
      return speaks()
    },
    modelListPaths: undefined,
    keyHint: "`Authorization: Bearer <key>` (the AWS SDK's `token`) or `x-api-key`",
    clientHeaders: ['x-api-key', 'amz-sdk-invocation-id', 'amz-sdk-request'],
    forwardedHeaders: undefined,
    // The AWS SDK reports the request id it reads from `x-amzn-requestid` (`$metadata.requestId`).
    requestIdHeader: 'x-amzn-requestid',
    clientKey,
    errorBody: bedrockErrorBody,
    errorHeaders: bedrockErrorHeaders,
  }
  return [
    // Listed as one entry, as the 404's list of what is served stays short.
    {
      path: '/model/{model}/converse',
      format: converse,
      streams: false,
      dialect,
      listed: 'POST /model/{model}/{converse|converse-stream}',
    },
    { path: '/model/{model}/converse-stream', format: converse, streams: true, dialect, listed: false },
    // CountTokens speaks Bedrock's own format whichever form it counts: served by the same variant.
    { path: '/model/{model}/count-tokens', format: bedrockCountTokens, streams: false, dialect },
  ]
}
