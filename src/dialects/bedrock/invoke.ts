// InvokeModel as a client asks for it (`POST /model/{id}/invoke`, `…/invoke-with-response-stream`): Anthropic's
// Messages body without `model` and `stream` (the path says both), with `anthropic_version` and `anthropic_beta`. The
// gateway turns it into a Messages body (`spokenBody`), so every upstream sees what an Anthropic client would have
// sent; streams go back as AWS event-stream frames, each Anthropic event a `chunk` of its base64 JSON.
import type { IncomingHttpHeaders } from 'node:http'
import { invalidField } from '../../errors.js'
import { isObject } from '../../json/value.js'
import { sseEvent } from '../../sse/write.js'
import { anthropicErrorType } from '../anthropic/index.js'
import { messagesFormat } from '../anthropic/messages/index.js'
import { messagesRequest } from '../anthropic/messages/wire.js'
import { validateMessagesMembers } from '../anthropic/validate.js'
import { requiredModel } from '../checks.js'
import type { CallTarget, ErrorFacts, OperationFormat, RequestBytes, SpokenBody } from '../dialect.js'
import type { SseFields } from '../framing/writer.js'
import { memberValue, splicedBody } from '../spoken-body.js'
import { eventStreamClientFraming, type FrameKind } from './event-frame.js'

/**
 * The stream exception each Anthropic error type is raised as by Bedrock's clients (the AWS SDK's modeled ones). A
 * stream's `api_error` is a model stream that failed midway, what Bedrock calls `modelStreamErrorException`.
 */
const EXCEPTION_BY_TYPE: Readonly<Record<string, string>> = {
  rate_limit_error: 'throttlingException',
  invalid_request_error: 'validationException',
  request_too_large: 'validationException',
  overloaded_error: 'serviceUnavailableException',
  timeout_error: 'modelTimeoutException',
  api_error: 'modelStreamErrorException',
}

/** The member of the gateway's own error events that names their exception where the error type alone cannot. */
const EXCEPTION_HINT = 'bedrock_exception'

/** A stream's `event: error` as the exception frame Bedrock's clients raise: its type, and `{ message }`. */
function exceptionFrame(data: string): { kind: FrameKind; payload: string } {
  let exception = 'internalServerException'
  let message = 'The model stream failed.'
  try {
    const parsed = JSON.parse(data) as { error?: { type?: unknown; message?: unknown }; [EXCEPTION_HINT]?: unknown }
    const type = parsed.error?.type
    const hint = parsed[EXCEPTION_HINT]
    if (typeof hint === 'string') exception = hint
    else if (typeof type === 'string') exception = EXCEPTION_BY_TYPE[type] ?? 'modelStreamErrorException'
    if (typeof parsed.error?.message === 'string') message = parsed.error.message
  } catch {
    // Not JSON: the default exception and message stand.
  }
  return { kind: { exception }, payload: JSON.stringify({ message }) }
}

/** One SSE event of an Anthropic stream as an InvokeModelWithResponseStream frame. */
function frameOf(fields: SseFields): { kind: FrameKind; payload: string } {
  if (fields.event === 'error') return exceptionFrame(fields.data)
  return { kind: { event: 'chunk' }, payload: `{"bytes":"${Buffer.from(fields.data, 'utf8').toString('base64')}"}` }
}

/** The framing of InvokeModelWithResponseStream answers. */
export const invokeFraming = eventStreamClientFraming(frameOf)

/** A model id from the path: SDKs percent-encode it (`…-v1%3A0`); it only ever selects a configured model. */
function pathModel(raw: string): string {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    // A malformed escape names no model: left as sent, it matches none.
    return raw
  }
}

/** The betas of the body's `anthropic_beta`, checked. */
function bodyBetas(value: unknown): readonly string[] {
  if (value === undefined) return NO_BETAS
  if (!Array.isArray(value) || !value.every((beta) => typeof beta === 'string'))
    invalidField('anthropic_beta', "'anthropic_beta' must be an array of strings.")
  return value as string[]
}

const NO_BETAS: readonly string[] = []

/** The client's `anthropic-beta` header and the body's betas, each once, in the order they came. */
function mergedBetas(header: string | string[] | undefined, betas: readonly string[]): string {
  // The usual call: one beta in the body (Claude Code's), none in a header.
  if ((header === undefined || header === '') && betas.length === 1) return (betas[0] as string).trim()
  const all = [...(Array.isArray(header) ? header.join(',') : (header ?? '')).split(','), ...betas].map((beta) => beta.trim())
  return [...new Set(all.filter((beta) => beta !== ''))].join(',')
}

/** The members of InvokeModel's body that are Bedrock's own, not the Messages API's. */
const TRANSPORT_MEMBERS = ['anthropic_version', 'anthropic_beta']

const NO_HEADERS: Readonly<Record<string, string>> = {}

/**
 * The Messages body of an InvokeModel body: the path's model and stream flag in, `anthropic_version` and
 * `anthropic_beta` out (the betas go as the `anthropic-beta` header, joined with the client's own), every other
 * member's bytes as sent. Spliced, never parsed or re-serialised whole: it is on every call's path. A large body
 * came scanned only: its betas are parsed from their own bytes.
 */
function spokenBody(body: RequestBytes, target: CallTarget, headers: IncomingHttpHeaders): SpokenBody {
  const betas = body.value === undefined ? memberValue(body.bytes, 'anthropic_beta') : body.value.anthropic_beta
  const beta = mergedBetas(headers['anthropic-beta'], bodyBetas(betas))
  return {
    body: splicedBody(body, TRANSPORT_MEMBERS, { model: target.model, stream: target.stream }),
    headers: beta === '' ? NO_HEADERS : { 'anthropic-beta': beta },
  }
}

/** The event that ends one of its streams early: Anthropic's `error` event, naming the exception it is framed as. */
function streamErrorEvent(error: ErrorFacts): string {
  const exception = error.status === 502 || error.status === 499 ? 'modelStreamErrorException' : undefined
  const body = { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message }, [EXCEPTION_HINT]: exception }
  return sseEvent(JSON.stringify(body), 'error')
}

/** `POST /model/{id}/invoke` and `…/invoke-with-response-stream`: Messages through Bedrock's InvokeModel paths. */
export const bedrockInvoke: OperationFormat = {
  operation: 'bedrock.invoke',
  otelName: 'chat',
  hub: messagesFormat,
  // The spoken body names the model: a model known upstream by another name is renamed there.
  modelInBody: true,
  readFields: new Set([...messagesRequest.gatewayReads, 'anthropic_version', 'anthropic_beta']),
  elementFields: ['role'],
  keepsRecords: true,
  framing: invokeFraming,
  read(fields, fromPath) {
    if (fields.model !== undefined) invalidField('model', "The model is named in the path; the body takes no 'model'.")
    if (fields.stream !== undefined) invalidField('stream', "The path says whether the answer streams; the body takes no 'stream'.")
    if (fields.anthropic_version !== undefined && typeof fields.anthropic_version !== 'string')
      invalidField('anthropic_version', "'anthropic_version' must be a string.")
    bodyBetas(fields.anthropic_beta)
    const target = { model: pathModel(fromPath?.model ?? ''), stream: fromPath?.stream === true }
    // The body's members are checked as they are: a copy with the path's model and stream in would cost a copy.
    requiredModel(target)
    validateMessagesMembers(fields)
    return target
  },
  streamErrorEvent,
  spokenBody,
}

/** Whether a parsed error body is Anthropic's (`{ type: 'error', error: { type, message } }`). */
export function anthropicError(body: unknown): { type: string | undefined; message: string | undefined } | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined
  const { type, message } = body.error
  return { type: typeof type === 'string' ? type : undefined, message: typeof message === 'string' ? message : undefined }
}
