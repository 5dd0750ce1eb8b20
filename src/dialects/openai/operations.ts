// What an OpenAI client asks of a model: chat completions and Responses (translated for models of other formats),
// and embeddings, which are passthrough to models of OpenAI-compatible upstreams only.
import { sseEvent } from '../../sse/write.js'
import type { OperationFormat } from '../dialect.js'
import { chatAskedUsage } from './chat-completions/asked-usage.js'
import { chatCompletionsFormat } from './chat-completions/index.js'
import { chatRequest } from './chat-completions/wire.js'
import { responsesFormat } from './responses/index.js'
import { responsesRequest } from './responses/wire.js'
import { validateChat, validateEmbeddings, validateResponses } from './validate.js'

/** `POST /v1/chat/completions`: the model and the stream flag are in the body. */
export const chatCompletions: OperationFormat = {
  operation: 'chat.completions',
  otelName: 'chat',
  hub: chatCompletionsFormat,
  modelInBody: true,
  readFields: chatRequest.gatewayReads,
  elementFields: ['role'],
  keepsRecords: true,
  read: (fields) => validateChat(fields),
  askedUsage: chatAskedUsage,
}

/** `POST /v1/embeddings`: passthrough to models of OpenAI-compatible upstreams only, never translated. */
export const embeddings: OperationFormat = {
  operation: 'embeddings',
  otelName: 'embeddings',
  modelInBody: true,
  readFields: new Set(['model', 'input']),
  keepsRecords: true,
  untranslated: 'embeddings',
  read: (fields) => validateEmbeddings(fields),
}

/** `POST /v1/responses`: OpenAI's Responses API; the model and the stream flag are in the body. */
export const responses: OperationFormat = {
  operation: 'responses',
  // The conventions name no operation for the Responses API: a turn of a conversation is a chat.
  otelName: 'chat',
  hub: responsesFormat,
  modelInBody: true,
  readFields: responsesRequest.gatewayReads,
  keepsRecords: true,
  read: (fields) => validateResponses(fields),
  // A ResponseErrorEvent, numbered after the events relayed (a Responses stream numbers its events from 0): an
  // `error` event without `sequence_number`, or a bare `data:` one, is not a Responses stream event.
  streamErrorEvent: ({ code, message, param }, eventsBefore) =>
    sseEvent(JSON.stringify({ type: 'error', code, message, param: param ?? null, sequence_number: eventsBefore }), 'error'),
  countsStreamEvents: true,
}
