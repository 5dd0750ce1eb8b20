// Turns the gateway's diagnostics channels into OpenTelemetry spans and metrics, after the GenAI semantic
// conventions. Only what the channels carry is recorded, and they never carry prompt or response text.
import diagnosticsChannel from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import {
  type Attributes,
  type Context,
  context,
  type MeterProvider,
  metrics,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from '@opentelemetry/api'
import {
  type CallEndMessage,
  type CallServedMessage,
  type CallStartMessage,
  gatewayChannels,
  type RecordStoredMessage,
  type RecoveryOperationMessage,
  type TraceHeaders,
  type UpstreamAttemptMessage,
  type UpstreamRequestMessage,
} from '../observe/channels.js'
import type { Gateway, Operation } from '../types.js'
import { AttributeSets } from './attribute-sets.js'
import { createInstruments } from './instruments.js'

/** Options of `instrumentGateway`. */
export interface InstrumentOptions {
  /** Where spans go. @default the global tracer provider (`trace.setGlobalTracerProvider`, or an SDK's `register()`) */
  tracerProvider?: TracerProvider
  /** Where metrics go. @default the global meter provider */
  meterProvider?: MeterProvider
}

/** The instrumentation scope name of every span and metric. */
const SCOPE = 'model-gateway'

/**
 * `gen_ai.operation.name` of each gateway operation. The conventions name no operation for OpenAI's Responses API
 * (a turn of a conversation is a chat) nor for counting tokens, hence a custom one.
 */
const OPERATION_NAME: Record<Operation, string> = {
  'chat.completions': 'chat',
  generateContent: 'generate_content',
  responses: 'chat',
  embeddings: 'embeddings',
  embedContent: 'embeddings',
  batchEmbedContents: 'embeddings',
  countTokens: 'count_tokens',
}

/** Epoch milliseconds of a `performance.now()` reading, a time every OpenTelemetry SDK takes as is. */
const epochMs = (at: number) => performance.timeOrigin + at

/** What a model call's SERVER span needs until the call ends. */
interface OpenCall {
  span: Span
  /** The context its upstream attempts are children of. */
  context: Context
}

/** What an upstream attempt's CLIENT span needs until its response head arrives. */
interface OpenAttempt {
  span: Span
  operation: string
  provider: string
}

/**
 * The parent of a new SERVER span: the active span when the host already traces its HTTP server (its span
 * continued the client's trace), otherwise the client's own `traceparent` through the global propagator.
 */
function parentOf(headers: TraceHeaders | undefined): Context {
  const active = context.active()
  if (trace.getSpan(active)) return active
  return headers ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT
}

/** `error.type` of a call or attempt: the gateway's reason, else the HTTP status of an error answer. */
function errorTypeOf(error: string | undefined, status: number | undefined): string | undefined {
  if (error !== undefined) return error
  return status !== undefined && status >= 400 ? String(status) : undefined
}

function markFailed(span: Span, errorType: string): void {
  span.setAttribute('error.type', errorType)
  span.setStatus({ code: SpanStatusCode.ERROR })
}

/** A listener that never throws: a failing exporter or SDK must not surface as an uncaught exception in a call. */
function fenced<T>(listener: (message: T) => void): (message: unknown) => void {
  return (message) => {
    try {
      listener(message as T)
    } catch {
      // Telemetry is best effort; the call it describes goes on regardless.
    }
  }
}

/**
 * Reports one gateway (or, without `gateway`, every gateway in the process) to OpenTelemetry: a SERVER span per
 * model call, a CLIENT span per upstream attempt carrying the trace on upstream in `traceparent`, a
 * `fetch_response` span per recovery fetch, and the GenAI metrics. Returns the function that stops it.
 */
export function instrumentGateway(gateway?: Pick<Gateway, 'id'>, options: InstrumentOptions = {}): () => void {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE)
  const instruments = createInstruments((options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE))
  const sets = new AttributeSets()
  const calls = new Map<string, OpenCall>()
  const attempts = new Map<string, OpenAttempt>()
  const ours = (message: { gatewayId: string }) => gateway === undefined || message.gatewayId === gateway.id

  const onStart = (message: CallStartMessage) => {
    if (!ours(message)) return
    const operation = OPERATION_NAME[message.operation]
    const parent = parentOf(message.trace)
    const span = tracer.startSpan(
      `${operation} ${message.model}`,
      {
        kind: SpanKind.SERVER,
        startTime: epochMs(message.startedAt),
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': message.provider,
          'gen_ai.request.model': message.model,
          'gen_ai.request.stream': message.stream,
          'model_gateway.request_id': message.requestId,
        },
      },
      parent,
    )
    calls.set(message.requestId, { span, context: trace.setSpan(parent, span) })
  }

  const onUpstreamRequest = (message: UpstreamRequestMessage) => {
    if (!ours(message)) return
    const operation = OPERATION_NAME[message.operation]
    const parent = calls.get(message.requestId)?.context ?? context.active()
    const span = tracer.startSpan(
      `${operation} ${message.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': message.provider,
          'gen_ai.request.model': message.model,
          'gen_ai.request.stream': message.stream,
          'model_gateway.upstream': message.upstream,
        },
      },
      parent,
    )
    // The upstream continues this trace: its own spans become children of this attempt.
    const carrier: Record<string, string> = {}
    propagation.inject(trace.setSpan(parent, span), carrier)
    for (const [name, value] of Object.entries(carrier)) message.headers.push(name, value)
    attempts.set(`${message.requestId}/${message.attempt}`, { span, operation, provider: message.provider })
  }

  const onAttempt = (message: UpstreamAttemptMessage) => {
    if (!ours(message)) return
    const key = `${message.requestId}/${message.attempt}`
    const open = attempts.get(key)
    if (!open) return
    attempts.delete(key)
    const errorType = errorTypeOf(message.error, message.status)
    if (message.status !== undefined) open.span.setAttribute('http.response.status_code', message.status)
    if (errorType) markFailed(open.span, errorType)
    else open.span.setAttribute('gen_ai.response.model', message.model)
    open.span.end()
    instruments.clientDuration.record(
      message.durationMs / 1000,
      sets.of(open.operation, open.provider, message.model, message.model, errorType),
    )
  }

  const onEnd = (message: CallEndMessage) => {
    if (!ours(message)) return
    const errorType = errorTypeOf(message.error, message.status)
    const operation = OPERATION_NAME[message.operation]
    const served = sets.of(operation, message.provider, message.model, message.upstreamModel, errorType)
    instruments.serverDuration.record(message.durationMs / 1000, served)
    if (message.firstChunkMs !== undefined && !errorType) instruments.timeToFirstToken.record(message.firstChunkMs / 1000, served)
    if (message.usage) {
      // A client metric: the gateway is the upstream's client, so the model is the one it asked the upstream for.
      const { provider, upstreamModel } = message
      instruments.tokenUsage.record(
        message.usage.input_tokens,
        sets.of(operation, provider, upstreamModel, upstreamModel, undefined, 'input'),
      )
      instruments.tokenUsage.record(
        message.usage.output_tokens,
        sets.of(operation, provider, upstreamModel, upstreamModel, undefined, 'output'),
      )
    }
    const open = calls.get(message.requestId)
    if (!open) return
    calls.delete(message.requestId)
    const { span } = open
    span.setAttribute('http.response.status_code', message.status)
    if (message.recovered) span.setAttribute('model_gateway.recovered', true)
    if (message.usage) {
      span.setAttribute('gen_ai.usage.input_tokens', message.usage.input_tokens)
      span.setAttribute('gen_ai.usage.output_tokens', message.usage.output_tokens)
    }
    if (errorType) markFailed(span, errorType)
    else span.setAttribute('gen_ai.response.model', message.upstreamModel)
    span.end()
  }

  const onServed = (message: CallServedMessage) => {
    if (!ours(message)) return
    const operation = OPERATION_NAME[message.operation]
    const attributes = sets.of(operation, message.provider, message.model)
    ;(message.how === 'join' ? instruments.callsJoined : instruments.callsReplayed).add(1, attributes)
    // Served without going upstream: a SERVER span that ends once the answer is handed over (or the call joined).
    tracer
      .startSpan(
        `${operation} ${message.model}`,
        {
          kind: SpanKind.SERVER,
          startTime: epochMs(message.startedAt),
          attributes: {
            ...attributes,
            'gen_ai.request.stream': message.stream,
            'model_gateway.request_id': message.requestId,
            'model_gateway.served': message.how,
            'model_gateway.original_request_id': message.originalRequestId,
          },
        },
        parentOf(message.trace),
      )
      .end()
  }

  const onStored = (message: RecordStoredMessage) => {
    if (!ours(message)) return
    instruments.recoveriesKept.add(1, { 'gen_ai.operation.name': OPERATION_NAME[message.operation] })
  }

  const onRecovery = (message: RecoveryOperationMessage) => {
    if (!ours(message)) return
    const fetch = message.operation === 'get'
    const attributes: Attributes = { 'model_gateway.recovery.operation': message.operation, 'model_gateway.request_id': message.requestId }
    if (message.recordId !== undefined) attributes['model_gateway.recovery.record_id'] = message.recordId
    if (message.found !== undefined) attributes['model_gateway.recovery.found'] = message.found
    const span = tracer.startSpan(
      fetch ? 'fetch_response' : `recoveries ${message.operation}`,
      { kind: SpanKind.SERVER, startTime: epochMs(message.startedAt), attributes },
      parentOf(message.trace),
    )
    if (message.error !== undefined) markFailed(span, message.error)
    span.end()
    if (fetch && message.found) instruments.recoveriesFetched.add(1)
  }

  const listeners: Array<[string, (message: unknown) => void]> = [
    [gatewayChannels.callStart, fenced(onStart)],
    [gatewayChannels.upstreamRequest, fenced(onUpstreamRequest)],
    [gatewayChannels.upstreamAttempt, fenced(onAttempt)],
    [gatewayChannels.callEnd, fenced(onEnd)],
    [gatewayChannels.callServed, fenced(onServed)],
    [gatewayChannels.recordStored, fenced(onStored)],
    [gatewayChannels.recoveryOperation, fenced(onRecovery)],
  ]
  for (const [name, listener] of listeners) diagnosticsChannel.subscribe(name, listener)
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    for (const [name, listener] of listeners) diagnosticsChannel.unsubscribe(name, listener)
    // Calls still running will publish no end this subscriber hears: their spans end now, so none is lost.
    for (const open of [...calls.values(), ...attempts.values()]) open.span.end()
    calls.clear()
    attempts.clear()
  }
}
