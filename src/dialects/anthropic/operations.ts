// What an Anthropic client asks of a model: a message (translated for models of other formats), and a token count.
import { sseEvent } from '../../sse/write.js'
import type { OperationFormat } from '../dialect.js'
import { messagesCountFormat } from './messages/count.js'
import { messagesFormat } from './messages/index.js'
import { messagesRequest } from './messages/wire.js'
import { anthropicErrorBody } from './status.js'
import { validateMessages, validateMessagesCountTokens } from './validate.js'

/** `POST /v1/messages`: the model and the stream flag are in the body. */
export const messages: OperationFormat = {
  operation: 'messages',
  otelName: 'chat',
  hub: messagesFormat,
  modelInBody: true,
  readFields: messagesRequest.gatewayReads,
  elementFields: ['role'],
  keepsRecords: true,
  read: (fields) => validateMessages(fields),
  // The Anthropic SDK skips events without an `event:` line and raises the body of an `error` event.
  streamErrorEvent: (error) => sseEvent(JSON.stringify(anthropicErrorBody(error)), 'error'),
}

/**
 * `POST /v1/messages/count_tokens`: free upstream, so an answer its client left is not kept. A model of another
 * format is counted by its upstream's own counting method (Gemini's `:countTokens`, OpenAI's
 * `/responses/input_tokens`), where it has one.
 */
export const messagesCountTokens: OperationFormat = {
  operation: 'messages.countTokens',
  otelName: 'count_tokens',
  counting: messagesCountFormat,
  modelInBody: true,
  readFields: new Set(['model', 'messages']),
  keepsRecords: false,
  countsTokens: true,
  untranslated: 'token counts',
  read: (fields) => validateMessagesCountTokens(fields),
}
