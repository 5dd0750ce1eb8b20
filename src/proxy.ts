import type { IncomingMessage, ServerResponse } from 'node:http'
import { type PreparsedBody, isJsonContentType, obtainBody } from './body.js'
import { buildRecord, writeRecord } from './capture.js'
import type { GatewayContext } from './context.js'
import { DeliveryWatch } from './delivery.js'
import { GatewayError } from './errors.js'
import type { ResolvedModel } from './options.js'
import type { ErrorFamily } from './responses.js'
import type { Endpoint } from './types.js'
import { callUpstream, readUpstreamBody, replaceTopLevelString, type UpstreamResponse } from './upstream.js'
import { NO_USAGE, StreamTail, type TokenCounts, usageOfBody } from './usage.js'
import { validateChat, validateGenerateContent } from './validate.js'

/** One model call as the routes describe it. */
export interface ModelCall {
  requestId: string
  owner: string
  family: ErrorFamily
  endpoint: Endpoint
  /** The gateway path, for the record. */
  path: string
  /** From the URL for generate-content; from the body for chat. */
  model?: string
  stream?: boolean
  preparsed: PreparsedBody | undefined
}

function findModel(ctx: GatewayContext, id: string, endpoint: Endpoint, family: ErrorFamily): ResolvedModel {
  const model = ctx.options.models.get(id)
  const wanted = endpoint === 'chat.completions' ? 'openai' : 'gemini'
  if (!model || model.upstream.type !== wanted) {
    // Same answer for "absent" and "other format": the list of what is configured is public anyway.
    // The name is the client's: echo a bounded piece of it, not megabytes.
    const shown = id.length > 200 ? `${id.slice(0, 200)}…` : id
    throw new GatewayError('model_not_found', `The model '${shown}' does not exist or is not served in this format.`, {
      param: family === 'openai' ? 'model' : undefined,
    })
  }
  return model
}

/** Serves a chat-completions or generate-content request end to end. */
export async function serveModelCall(ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, call: ModelCall): Promise<void> {
  // Watch from the start: a client that leaves while the body is read or the upstream works must be seen.
  const watch = new DeliveryWatch(res)
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new GatewayError('unsupported_media_type', "Content-Type must be 'application/json'.")
  }
  const body = await obtainBody(req, ctx.options.maxRequestBytes, call.preparsed)
  let modelId: string
  let stream: boolean
  if (call.endpoint === 'chat.completions') {
    const chat = validateChat(body.fields)
    modelId = chat.model
    stream = chat.stream
  } else {
    validateGenerateContent(body.fields)
    modelId = call.model as string
    stream = call.stream === true
  }
  const model = findModel(ctx, modelId, call.endpoint, call.family)
  let forward = body.bytes
  if (call.endpoint === 'chat.completions' && model.upstreamModel !== model.id) {
    forward = Buffer.from(replaceTopLevelString(body.bytes.toString('utf8'), 'model', model.upstreamModel), 'utf8')
  }
  if (stream) return relayStream(ctx, res, call, model, forward)

  const response = await callUpstream(ctx.agent, model, call.endpoint, false, forward, undefined)
  const responseBytes = await readUpstreamBody(response)
  const contentType = headerText(response, 'content-type') ?? 'application/json'
  const ok = response.statusCode >= 200 && response.statusCode < 300
  if (!watch.clientGone) {
    res.writeHead(response.statusCode, passHeaders(response, call.requestId, contentType, responseBytes.length))
    res.end(responseBytes, (error?: Error | null) => watch.noteWriteError(error as NodeJS.ErrnoException))
  }
  if (!ok) return
  const outcome = await watch.settled()
  let recovered = false
  if (!outcome.delivered) {
    const record = buildRecord(
      {
        requestId: call.requestId,
        reason: outcome.reason,
        endpoint: call.endpoint,
        path: call.path,
        model: model.id,
        requestBytes: body.bytes,
        requestValue: body.value,
        status: response.statusCode,
        contentType,
        responseBytes,
      },
      ctx.options.recovery.maxStoredRequestBytes,
    )
    recovered = await writeRecord(ctx.store, call.owner, record, ctx.options.recovery.ttlMs, ctx.options.logger)
  }
  if (ctx.options.onUsage) reportUsage(ctx, call, model, usageOfBody(call.endpoint, responseBytes), recovered)
}

function headerText(response: UpstreamResponse, name: string): string | undefined {
  const value = response.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * Headers passed down: the upstream's content type and, on errors, its retry hint. The request id goes in here
 * rather than through `setHeader`, which would make `writeHead` merge two header sets on every call.
 */
function passHeaders(response: UpstreamResponse, requestId: string, contentType: string, length?: number): Record<string, string | number> {
  const headers: Record<string, string | number> = { 'content-type': contentType, 'x-request-id': requestId }
  if (length !== undefined) headers['content-length'] = length
  const retryAfter = headerText(response, 'retry-after')
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter
  return headers
}

/** Called once per completed 2xx upstream call; zero counts when the upstream reported none, so no call goes unseen. */
function reportUsage(ctx: GatewayContext, call: ModelCall, model: ResolvedModel, counts: TokenCounts | undefined, recovered: boolean): void {
  try {
    ctx.options.onUsage?.({ requestId: call.requestId, owner: call.owner, model: model.id, endpoint: call.endpoint, ...(counts ?? NO_USAGE), recovered })
  } catch (error) {
    ctx.options.logger.error('model-gateway: onUsage threw', { requestId: call.requestId, error: String(error) })
  }
}

/**
 * Pipes an upstream event stream to the client chunk by chunk, pausing the upstream while the client's socket is
 * full. Plain events rather than `for await`, which delays every chunk by a few microtask turns.
 */
function pipeEvents(body: UpstreamResponse['body'], res: ServerResponse, tail: StreamTail | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      tail?.push(chunk)
      if (!res.write(chunk)) body.pause()
    }
    const onDrain = () => body.resume()
    const done = (error?: Error) => {
      body.off('data', onData)
      res.off('drain', onDrain)
      if (error) reject(error)
      else resolve()
    }
    body.on('data', onData)
    res.on('drain', onDrain)
    body.once('end', () => done())
    body.once('error', done)
  })
}

/** Relays a stream chunk by chunk with backpressure; the upstream call is aborted as soon as the client leaves. */
async function relayStream(ctx: GatewayContext, res: ServerResponse, call: ModelCall, model: ResolvedModel, forward: Buffer): Promise<void> {
  const controller = new AbortController()
  const onClose = () => {
    if (!res.writableFinished) controller.abort()
  }
  res.once('close', onClose)
  try {
    let response: UpstreamResponse
    try {
      response = await callUpstream(ctx.agent, model, call.endpoint, true, forward, controller.signal)
    } catch (error) {
      if (controller.signal.aborted) return
      throw error
    }
    const contentType = headerText(response, 'content-type') ?? 'text/event-stream'
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const bytes = await readUpstreamBody(response)
      res.writeHead(response.statusCode, passHeaders(response, call.requestId, contentType, bytes.length))
      res.end(bytes)
      return
    }
    res.writeHead(response.statusCode, {
      'content-type': contentType,
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-request-id': call.requestId,
    })
    res.flushHeaders()
    const tail = ctx.options.onUsage ? new StreamTail() : undefined
    try {
      await pipeEvents(response.body, res, tail)
    } catch (error) {
      if (controller.signal.aborted) return
      // Headers are out: the only honest signal left for a broken upstream stream is a cut connection.
      ctx.options.logger.warn('model-gateway: upstream stream broke off', { requestId: call.requestId, error: String(error) })
      res.destroy()
      return
    }
    res.end()
    if (tail) reportUsage(ctx, call, model, tail.usage(call.endpoint), false)
  } finally {
    res.off('close', onClose)
  }
}

