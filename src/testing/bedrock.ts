// Bedrock's runtime (`/model/{id}/invoke`, `/invoke-with-response-stream`, `/converse`, `/converse-stream`,
// `/count-tokens`):
// authentication checked for real (bedrock-auth.ts), Claude's Messages answered by the Anthropic mock and framed as
// Bedrock frames them, Converse by bedrock-converse.ts, errors as
// Bedrock sends them (`x-amzn-errortype`, `{ message }`), streams as AWS event streams with correct CRCs.
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { promptTokens } from './anthropic.js'
import { answerMessages } from './anthropic-messages.js'
import { authProblem } from './bedrock-auth.js'
import { answerConverse, converseProblem, converseTokens } from './bedrock-converse.js'
import { damaged, EVENT_STREAM_TYPE, eventFrame } from './bedrock-frames.js'
import { after, type State, type StreamWriter, send, stream } from './respond.js'
import { JSON_TYPE, type JsonObject, num } from './shared.js'
import type { MockAwsCredentials, MockUpstreamOptions } from './types.js'

/** The test credentials the mock accepts when it is given none. */
export const MOCK_AWS_CREDENTIALS: MockAwsCredentials = {
  accessKeyId: 'AKIAMOCKGATEWAY00001',
  secretAccessKey: 'mock/secret/access/key/for/tests/only0000',
}

/** Bedrock's runtime paths: the model id (URL-encoded) and the API. */
const BEDROCK_PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/

/** The model id and API of a Bedrock path, or undefined for another path. */
export function bedrockCall(method: string, pathname: string): { model: string; api: string } | undefined {
  const m = method === 'POST' ? BEDROCK_PATH.exec(pathname) : null
  return m ? { model: decodeURIComponent(m[1] as string), api: m[2] as string } : undefined
}

/** Bedrock's error types by the status a control asks for. */
const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
}

/** Answer a Bedrock error: its type in `x-amzn-errortype`, the body `{ message }`. */
export function sendBedrockError(res: ServerResponse, st: State, status: number, type: string, message: string): void {
  st.headers = { ...st.headers, 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }
  send(res, st, status, JSON_TYPE, JSON.stringify({ message }))
}

/** An Anthropic SSE event as InvokeModelWithResponseStream frames it: a `chunk` whose `bytes` hold the event's JSON. */
function chunkFrame(sse: string): Buffer {
  const data = /^data: (.*)$/m.exec(sse)?.[1] ?? '{}'
  const event = JSON.parse(data) as JsonObject
  if (event.type === 'message_stop') {
    event['amazon-bedrock-invocationMetrics'] = { inputTokenCount: 0, outputTokenCount: 0, invocationLatency: 1, firstByteLatency: 1 }
  }
  return eventFrame({ event: 'chunk' }, { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefghijklmnopqrstuvwxyz' })
}

/** Writes the Anthropic mock's SSE frames as InvokeModelWithResponseStream's event stream. */
const eventStreamWriter: StreamWriter = (res, st, _type, frames, ctl) => {
  stream(res, st, EVENT_STREAM_TYPE, damaged(frames.map(chunkFrame), ctl), ctl)
}

/** What a Bedrock call is answered from: the mock's options, its controls for a body, and its id counter. */
export interface BedrockContext {
  options: MockUpstreamOptions
  controls(text: string, body: JsonObject): JsonObject
  nextSeq(): number
}

/** InvokeModel's body checks for Anthropic models: a version in, no `model` or `stream`, betas as an array. */
function invokeProblem(body: JsonObject): string | undefined {
  // Bedrock's own version, or an Anthropic API version (what `@anthropic-ai/bedrock-sdk` moves from its header).
  const version = body.anthropic_version
  if (version !== 'bedrock-2023-05-31' && !(typeof version === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(version))) {
    return 'anthropic_version: Invalid value; expected bedrock-2023-05-31'
  }
  for (const key of ['model', 'stream']) if (key in body) return `extraneous key [${key}] is not permitted`
  if (
    body.anthropic_beta !== undefined &&
    !(Array.isArray(body.anthropic_beta) && body.anthropic_beta.every((b) => typeof b === 'string'))
  ) {
    return 'anthropic_beta: expected an array of strings'
  }
  return undefined
}

/** The members of CountTokens' Converse form (`ConverseTokensRequest`), and the mock's own `mock`. */
const CONVERSE_COUNTED = new Set(['messages', 'system', 'toolConfig', 'additionalModelRequestFields', 'mock'])

/**
 * What a CountTokens body counts, decoded: `input.invokeModel.body` (the base64 of an InvokeModel body) or
 * `input.converse`; undefined for a body of neither form.
 */
function counted(body: JsonObject): { invoke: JsonObject } | { converse: JsonObject } | undefined {
  const input = isObject(body.input) ? body.input : undefined
  if (input === undefined || Object.keys(body).length !== 1 || Object.keys(input).length !== 1) return undefined
  if (isObject(input.converse)) return { converse: input.converse }
  const encoded = isObject(input.invokeModel) ? input.invokeModel.body : undefined
  if (typeof encoded !== 'string') return undefined
  try {
    const decoded: unknown = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))
    return isObject(decoded) ? { invoke: decoded } : undefined
  } catch {
    return undefined
  }
}

/** Why Bedrock refuses a CountTokens body: each form checked as the call it counts would be (InvokeModel's needs `max_tokens`). */
function countProblem(model: string, body: JsonObject): string | undefined {
  const what = counted(body)
  if (what === undefined) return "input: exactly one of 'invokeModel' (a base64 body) and 'converse' is required"
  if ('converse' in what) {
    for (const key of Object.keys(what.converse)) if (!CONVERSE_COUNTED.has(key)) return `extraneous key [${key}] is not permitted`
    return converseProblem(what.converse)
  }
  if (!model.includes('anthropic.')) return `The provided model identifier is invalid for InvokeModel in the mock: ${model}`
  if (typeof what.invoke.max_tokens !== 'number') return 'max_tokens: field required'
  return invokeProblem(what.invoke) ?? (Array.isArray(what.invoke.messages) ? undefined : 'messages: field required')
}

/** Answers a CountTokens call: `{ inputTokens }`, the count a call with the same prompt reports. */
function answerCount(body: JsonObject, res: ServerResponse, st: State): void {
  const what = counted(body) as { invoke: JsonObject } | { converse: JsonObject }
  const inputTokens = 'converse' in what ? converseTokens(what.converse) : promptTokens(what.invoke as JsonObject & { messages: unknown[] })
  send(res, st, 200, JSON_TYPE, JSON.stringify({ inputTokens }))
}

/** The error a call is answered with: the one its controls ask for, or Bedrock's refusal of its body. */
function refusalOf(
  call: { model: string; api: string },
  body: JsonObject,
  ctl: JsonObject,
): { status: number; type: string; message: string } | undefined {
  const status = num(ctl.status)
  if (status !== undefined) {
    const type = typeof ctl.error_type === 'string' ? ctl.error_type : (TYPE_BY_STATUS[status] ?? 'InternalServerException')
    return { status, type, message: `Mock ${type} (status ${status}).` }
  }
  const invalid = (message: string) => ({ status: 400, type: 'ValidationException', message })
  if (call.api === 'count-tokens') {
    const problem = countProblem(call.model, body)
    return problem === undefined ? undefined : invalid(problem)
  }
  if (call.api === 'converse' || call.api === 'converse-stream') {
    const problem = converseProblem(body)
    return problem === undefined ? undefined : invalid(problem)
  }
  if (!call.model.includes('anthropic.'))
    return invalid(`The provided model identifier is invalid for InvokeModel in the mock: ${call.model}`)
  const problem = invokeProblem(body)
  return problem === undefined ? undefined : invalid(problem)
}

/** Answers one Bedrock call, once its authentication is checked. */
export function answerBedrock(
  call: { model: string; api: string },
  request: { method: string; target: string; headers: IncomingHttpHeaders; body: Buffer },
  res: ServerResponse,
  st: State,
  context: BedrockContext,
): void {
  st.headers = { 'x-amzn-requestid': randomUUID() }
  const { bedrock } = context.options
  const accepted = {
    credentials: bedrock?.credentials ?? [MOCK_AWS_CREDENTIALS],
    apiKeys: bedrock?.apiKeys ?? (context.options.apiKey === undefined ? [] : [context.options.apiKey]),
    now: Date.now() + (bedrock?.clockSkewMs ?? 0),
  }
  Promise.resolve(authProblem(request.method, request.target, request.headers, request.body, accepted)).then(
    (refused) => {
      if (st.closed) return
      if (refused) return sendBedrockError(res, st, 403, refused.type, refused.message)
      answerAuthorized(call, request.body, res, st, context)
    },
    () => sendBedrockError(res, st, 500, 'InternalServerException', 'The mock could not check the signature.'),
  )
}

function answerAuthorized(
  call: { model: string; api: string },
  buf: Buffer,
  res: ServerResponse,
  st: State,
  context: BedrockContext,
): void {
  const text = buf.toString('utf8')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (!isObject(body)) {
    sendBedrockError(res, st, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.')
    return
  }
  // A count's controls are in the body it counts.
  const inner = call.api === 'count-tokens' ? counted(body) : undefined
  const innerBody = inner === undefined ? body : 'invoke' in inner ? inner.invoke : inner.converse
  const ctl = context.controls(inner === undefined ? text : JSON.stringify(innerBody), innerBody)
  if (isObject(ctl.headers)) st.headers = { ...st.headers, ...ctl.headers }
  st.stream = call.api.endsWith('stream')
  if (ctl.hang === true) return
  after(st, num(ctl.delay_ms) ?? num(context.options.delayMs) ?? 0, () => {
    if (ctl.destroy === true) {
      st.selfDestroyed = true
      res.socket?.destroy()
      return
    }
    const refused = refusalOf(call, body, ctl)
    if (refused) {
      sendBedrockError(res, st, refused.status, refused.type, refused.message)
      return
    }
    if (call.api === 'count-tokens') {
      answerCount(body, res, st)
      return
    }
    if (call.api.startsWith('converse')) {
      answerConverse(body, ctl, st.stream, res, st, context.nextSeq())
      return
    }
    const { anthropic_version: _v, anthropic_beta: _b, ...messages } = body
    const asked = { ...messages, model: call.model, ...(st.stream ? { stream: true } : {}) }
    answerMessages(asked, ctl, '2023-06-01', res, st, context.nextSeq, eventStreamWriter)
  })
}
