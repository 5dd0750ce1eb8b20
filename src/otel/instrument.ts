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
  type TextMapSetter,
  type TracerProvider,
  trace,
} from '@opentelemetry/api'
import {
  type CallEndMessage,
  type CallRefusedMessage,
  type CallServedMessage,
  type CallStartMessage,
  gatewayChannels,
  type RecordStoredMessage,
  type RecoveryOperationMessage,
  type TraceHeaders,
  type UpstreamAttemptMessage,
  type UpstreamRequestMessage,
} from '../observe/channels.js'
import type { Gateway } from '../types.js'
import { createInstruments } from './instruments.js'
import { type AttemptShape, attemptShapes, type CallShape, callShapes, operationName } from './shapes.js'

/** Options of `instrumentGateway`. */
export interface InstrumentOptions {
  /** Where spans go. @default the global tracer provider (`trace.setGlobalTracerProvider`, or an SDK's `register()`) */
  tracerProvider?: TracerProvider
  /** Where metrics go. @default the global meter provider */
  meterProvider?: MeterProvider
}

/** The instrumentation scope name of every span and metric. */
const SCOPE = 'model-gateway'

/** Epoch milliseconds of a `performance.now()` reading, a time every OpenTelemetry SDK takes as is. */
const TIME_ORIGIN = performance.timeOrigin
const epochMs = (at: number) => TIME_ORIGIN + at

/** Writes trace context straight onto an `upstream:request` message's flat header list. */
const HEADER_LIST: TextMapSetter<string[]> = {
  set: (headers, name, value) => {
    headers.push(name, value)
  },
}

/** What an upstream attempt's CLIENT span needs until its response head arrives. */
interface OpenAttempt {
  span: Span
  shape: AttemptShape
  attempt: number
}

/**
 * The attribute a call's client session goes in: the GenAI conventions' id of a conversation ("session, thread") that
 * correlates its calls, rather than `session.id`, which names an end user's application session.
 */
const CONVERSATION_ID = 'gen_ai.conversation.id'

/** What a model call's SERVER span needs until the call ends. */
interface OpenCall {
  span: Span
  /** The client's session id, for its attempts' CLIENT spans too. */
  sessionId: string | undefined
  shape: CallShape
  /** The context its upstream attempts are children of. */
  context: Context
  /** Its attempt in flight: a call's attempts go one after another. */
  attempt: OpenAttempt | undefined
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

/**
 * Reports one gateway (or, without `gateway`, every gateway in the process) to OpenTelemetry: a SERVER span per
 * model call, a CLIENT span per upstream attempt carrying the trace on upstream in `traceparent`, a
 * `fetch_response` span per recovery fetch, and the GenAI metrics. Returns the function that stops it.
 */
export function instrumentGateway(gateway?: Pick<Gateway, 'id'>, options: InstrumentOptions = {}): () => void {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE)
  const instruments = createInstruments((options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE))
  const shapesOfCalls = callShapes()
  const shapesOfAttempts = attemptShapes()
  const calls = new Map<string, OpenCall>()
  /** Attempts of calls this subscriber saw no start of (it began mid-call). */
  const strays = new Map<string, OpenAttempt>()
  const ours = (message: { gatewayId: string }) => gateway === undefined || message.gatewayId === gateway.id

  // Each listener catches everything: a failing exporter or SDK must not surface as an uncaught exception in a call.
  const onStart = (published: unknown) => {
    try {
      const message = published as CallStartMessage
      if (!ours(message)) return
      const shape = shapesOfCalls.of(message)
      const parent = parentOf(message.trace)
      const span = tracer.startSpan(
        shape.name,
        { kind: SpanKind.SERVER, startTime: epochMs(message.startedAt), attributes: shape.start },
        parent,
      )
      span.setAttribute('model_gateway.request_id', message.requestId)
      const { sessionId } = message
      if (sessionId !== undefined) span.setAttribute(CONVERSATION_ID, sessionId)
      calls.set(message.requestId, { span, sessionId, shape, context: trace.setSpan(parent, span), attempt: undefined })
    } catch {
      // Telemetry is best effort; the call it describes goes on regardless.
    }
  }

  const onUpstreamRequest = (published: unknown) => {
    try {
      const message = published as UpstreamRequestMessage
      if (!ours(message)) return
      const shape = shapesOfAttempts.of(message)
      const call = calls.get(message.requestId)
      const parent = call?.context ?? context.active()
      const span = tracer.startSpan(shape.name, { kind: SpanKind.CLIENT, attributes: shape.start }, parent)
      if (call?.sessionId !== undefined) span.setAttribute(CONVERSATION_ID, call.sessionId)
      // The upstream continues this trace: its own spans become children of this attempt.
      propagation.inject(trace.setSpan(parent, span), message.headers, HEADER_LIST)
      const open: OpenAttempt = { span, shape, attempt: message.attempt }
      if (call) call.attempt = open
      else strays.set(message.requestId, open)
    } catch {}
  }

  const onAttempt = (published: unknown) => {
    try {
      const message = published as UpstreamAttemptMessage
      if (!ours(message)) return
      const call = calls.get(message.requestId)
      let open = call?.attempt
      if (open?.attempt === message.attempt) (call as OpenCall).attempt = undefined
      else {
        open = strays.get(message.requestId)
        if (open?.attempt !== message.attempt) return
        strays.delete(message.requestId)
      }
      const { span, shape } = open
      const errorType = errorTypeOf(message.error, message.status)
      if (message.status !== undefined) span.setAttribute('http.response.status_code', message.status)
      if (errorType) markFailed(span, errorType)
      else span.setAttribute('gen_ai.response.model', message.model)
      span.end()
      instruments.clientDuration.record(message.durationMs / 1000, errorType ? shape.failed(errorType) : shape.answered)
    } catch {}
  }

  const onEnd = (published: unknown) => {
    try {
      const message = published as CallEndMessage
      if (!ours(message)) return
      const open = calls.get(message.requestId)
      const shape = open?.shape ?? shapesOfCalls.of(message)
      const errorType = errorTypeOf(message.error, message.status)
      const ended = errorType ? shape.failed(errorType) : shape.answered
      instruments.serverDuration.record(message.durationMs / 1000, ended)
      if (message.firstChunkMs !== undefined && !errorType) instruments.timeToFirstToken.record(message.firstChunkMs / 1000, ended)
      const { usage } = message
      // A hit used no tokens: its counts are the cached answer's, reported on its usage event only.
      if (message.cache === 'hit' || message.cache === 'miss') {
        instruments.cacheLookups.add(1, { ...shape.answered, 'model_gateway.cache': message.cache })
      }
      if (usage && message.cache !== 'hit') {
        instruments.tokenUsage.record(usage.input_tokens, shape.inputTokens)
        instruments.tokenUsage.record(usage.output_tokens, shape.outputTokens)
      }
      if (message.cost !== undefined) instruments.cost.add(message.cost, shape.answered)
      if (!open) return
      calls.delete(message.requestId)
      const { span } = open
      span.setAttribute('http.response.status_code', message.status)
      if (message.recovered) span.setAttribute('model_gateway.recovered', true)
      if (message.cache) span.setAttribute('model_gateway.cache', message.cache)
      if (message.finishReasons) span.setAttribute('gen_ai.response.finish_reasons', message.finishReasons)
      if (usage) {
        span.setAttribute('gen_ai.usage.input_tokens', usage.input_tokens)
        span.setAttribute('gen_ai.usage.output_tokens', usage.output_tokens)
      }
      if (message.cost !== undefined) span.setAttribute('model_gateway.cost', message.cost)
      if (errorType) markFailed(span, errorType)
      else span.setAttribute('gen_ai.response.model', message.upstreamModel)
      span.end()
    } catch {}
  }

  const onServed = (published: unknown) => {
    try {
      const message = published as CallServedMessage
      if (!ours(message)) return
      const shape = shapesOfCalls.of(message)
      ;(message.how === 'join' ? instruments.callsJoined : instruments.callsReplayed).add(1, shape.served)
      // Served without going upstream: a SERVER span that ends once the answer is handed over (or the call joined).
      const span = tracer.startSpan(
        shape.name,
        { kind: SpanKind.SERVER, startTime: epochMs(message.startedAt), attributes: shape.start },
        parentOf(message.trace),
      )
      span.setAttribute('model_gateway.request_id', message.requestId)
      span.setAttribute('model_gateway.served', message.how)
      if (message.sessionId !== undefined) span.setAttribute(CONVERSATION_ID, message.sessionId)
      span.setAttribute('model_gateway.original_request_id', message.originalRequestId)
      span.end()
    } catch {}
  }

  // Refused by the ledger before going upstream: no call:start or call:end, so no span; counted by its reason.
  const onRefused = (published: unknown) => {
    try {
      const message = published as CallRefusedMessage
      if (!ours(message)) return
      instruments.callsRefused.add(1, shapesOfCalls.of(message).failed(message.error))
    } catch {}
  }

  const onStored = (published: unknown) => {
    try {
      const message = published as RecordStoredMessage
      if (!ours(message)) return
      instruments.recoveriesKept.add(1, { 'gen_ai.operation.name': operationName(message.operation) })
    } catch {}
  }

  const onRecovery = (published: unknown) => {
    try {
      const message = published as RecoveryOperationMessage
      if (!ours(message)) return
      const fetch = message.operation === 'get'
      const attributes: Attributes = {
        'model_gateway.recovery.operation': message.operation,
        'model_gateway.request_id': message.requestId,
      }
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
    } catch {}
  }

  const listeners: Array<[string, (message: unknown) => void]> = [
    [gatewayChannels.callStart, onStart],
    [gatewayChannels.upstreamRequest, onUpstreamRequest],
    [gatewayChannels.upstreamAttempt, onAttempt],
    [gatewayChannels.callEnd, onEnd],
    [gatewayChannels.callServed, onServed],
    [gatewayChannels.callRefused, onRefused],
    [gatewayChannels.recordStored, onStored],
    [gatewayChannels.recoveryOperation, onRecovery],
  ]
  for (const [name, listener] of listeners) diagnosticsChannel.subscribe(name, listener)
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    for (const [name, listener] of listeners) diagnosticsChannel.unsubscribe(name, listener)
    // Calls still running will publish no end this subscriber hears: their spans end now, so none is lost.
    for (const open of calls.values()) {
      open.attempt?.span.end()
      open.span.end()
    }
    for (const open of strays.values()) open.span.end()
    calls.clear()
    strays.clear()
  }
}
