// Claude on Bedrock: Anthropic's Messages through InvokeModel / InvokeModelWithResponseStream. The body is the
// Messages body without `model` and `stream` (the path says both) and with `anthropic_version`; the client's
// `anthropic-beta` header goes in as `anthropic_beta`. Answers are Anthropic's own, streams too once their frames
// are read, so an Anthropic client's call is passthrough and every other dialect is translated as for Anthropic. Token
// counts go to CountTokens with that body in its InvokeModel form; its `{ inputTokens }` is read back as Anthropic's.

import type { UpstreamFormat } from '../../translate/format.js'
import { parseJson } from '../../translate/readers.js'
import type { Operation } from '../../types.js'
import type { UpstreamErrorReader } from '../../upstream/authorize.js'
import { anthropic, anthropicErrorType } from '../anthropic/index.js'
import { messagesFormat } from '../anthropic/messages/index.js'
import { messagesRequestFromHub } from '../anthropic/messages/request.js'
import type { Dialect } from '../dialect.js'
import { bedrockCommon } from './common.js'
import { countedTokens, invokeCountBody, isCount } from './count.js'
import { errorMessage, errorType, headerType, refusalCause, statusOfType } from './errors.js'
import { type EventFrame, eventStreamFraming } from './event-stream.js'

/** The API version Bedrock's Anthropic models take in the body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31'

/** A Messages body as Bedrock takes it: its version in, `model` and `stream` out, the betas as an array. */
function bedrockBody(body: object, betas: readonly string[]): Record<string, unknown> {
  const { model: _model, stream: _stream, ...rest } = body as Record<string, unknown>
  const out: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest }
  if (betas.length > 0) out.anthropic_beta = betas
  return out
}

/** The betas of the client's `anthropic-beta` header(s), comma-separated as the SDKs send them. */
function betasOf(forwarded: readonly string[]): string[] {
  const betas: string[] = []
  for (let i = 0; i < forwarded.length; i += 2) {
    if (forwarded[i] !== 'anthropic-beta') continue
    for (const beta of (forwarded[i + 1] as string).split(',')) if (beta.trim() !== '') betas.push(beta.trim())
  }
  return betas
}

/** A token count of Anthropic's format (its clients', Vertex clients'): passthrough, answered in Anthropic's shape. */
const anthropicCount = (operation: Operation) => operation === 'messages.countTokens' || operation === 'vertex.countTokens'

/** Token counting on Claude on Bedrock: the whole request, as InvokeModel would take it, counted by CountTokens. */
const invokeCountFormat: UpstreamFormat = {
  requestFromHub: (hub, plan) => invokeCountBody(bedrockBody(messagesRequestFromHub(hub, { ...plan, stream: false }), [])),
  responseToHub: countedTokens,
  errorToHub: messagesFormat.errorToHub,
  streamDecoder: messagesFormat.streamDecoder,
}

/** Anthropic's error body for a Bedrock error: what Anthropic's clients and the Messages reader understand. */
function anthropicError(status: number, type: string | undefined, message: string): string {
  const kind = type === 'ModelNotReadyException' || type === 'ServiceUnavailableException' ? 'overloaded_error' : anthropicErrorType(status)
  return JSON.stringify({ type: 'error', error: { type: kind, message } })
}

const errors: UpstreamErrorReader = {
  status: (status, headers) => statusOfType(headerType(headers), status),
  body: (status, headers, body) => Buffer.from(anthropicError(status, headerType(headers), errorMessage(body))),
  cause: refusalCause,
}

/** One frame of InvokeModelWithResponseStream as Anthropic's SSE: a chunk's event, or an exception as `error`. */
function writeFrame(frame: EventFrame): string {
  if (frame.messageType === 'event') {
    if (frame.type !== 'chunk') return ''
    const bytes = (JSON.parse(frame.payload) as { bytes?: unknown }).bytes
    if (typeof bytes !== 'string') return ''
    const data = Buffer.from(bytes, 'base64').toString('utf8')
    const event = JSON.parse(data) as { type?: unknown }
    // One line of `data`, whatever whitespace the upstream's JSON had.
    const line = data.includes('\n') ? JSON.stringify(event) : data
    return `event: ${String(event.type)}\ndata: ${line}\n\n`
  }
  const type = errorType(frame.type)
  return `event: error\ndata: ${anthropicError(statusOfType(type, 500), type, errorMessage(frame.payload))}\n\n`
}

/** Claude on Bedrock, as the variant of a Bedrock upstream its Anthropic models speak. */
export const bedrockAnthropic: Dialect = {
  ...anthropic,
  ...bedrockCommon,
  routes: [],
  forwardedHeaders: undefined,
  // A count of another format (a Bedrock CountTokens client's, a Converse one) in CountTokens' InvokeModel form.
  countingApi: { format: invokeCountFormat, operation: 'bedrock.countTokens' },
  speaks: anthropic,
  passthroughBody: (body, forwarded, operation) => {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    const invoke = bedrockBody(parsed, betasOf(forwarded))
    return Buffer.from(JSON.stringify(isCount(operation) ? invokeCountBody(invoke) : invoke))
  },
  upstreamAnswer: (body, operation) =>
    anthropicCount(operation)
      ? Buffer.from(JSON.stringify({ input_tokens: countedTokens(parseJson(body.toString('utf8'))).usage?.input ?? 0 }))
      : body,
  upstreamFormat: {
    ...messagesFormat,
    requestFromHub: (hub, plan) => bedrockBody(messagesRequestFromHub(hub, plan), []),
  },
  translatedOperation: 'messages',
  upstreamPath: (basePath, upstreamModel, operation, stream) =>
    `${basePath}/model/${encodeURIComponent(upstreamModel)}/${isCount(operation) ? 'count-tokens' : stream ? 'invoke-with-response-stream' : 'invoke'}`,
  upstreamFraming: (_operation, options) => eventStreamFraming(writeFrame, options),
  upstreamErrors: errors,
}
