import type { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import type { ResolvedModel } from '../config/resolve.js'
import type { Operation } from '../types.js'
import { decodedBody } from './decode.js'
import { upstreamFailure } from './failure.js'

/** One upstream call, fully described: which model (hence upstream and dialect), what is asked, and the bytes. */
export interface UpstreamRequest {
  /** The gateway's request id, for logs and diagnostics. */
  requestId: string
  model: ResolvedModel
  operation: Operation
  stream: boolean
  /** 1 for the first attempt of a call; interceptors that try again count up. */
  attempt: number
  /** The exact bytes to send. */
  body: Buffer
  /** Aborts the call (a stream whose client left). */
  signal: AbortSignal | undefined
  /** Headers for this attempt only (trace context), as a flat `[name, value, …]` list. */
  headers?: readonly string[]
}

/** An upstream response whose body has not been read yet; the body is always plain (decoded) bytes. */
export interface UpstreamResponse {
  statusCode: number
  headers: Dispatcher.ResponseData['headers']
  body: Readable
}

/** Sends one upstream request; rejects with a 502/504 GatewayError when no response head arrives. */
export type Send = (request: UpstreamRequest) => Promise<UpstreamResponse>

/** Headers of the upstream call: the gateway's own credentials (set once per upstream), never the client's. */
function upstreamHeaders(request: UpstreamRequest): string[] {
  const headers = [
    ...request.model.upstream.requestHeaders,
    'content-length',
    String(request.body.length),
    'accept',
    request.stream ? 'text/event-stream' : 'application/json',
  ]
  if (request.headers) headers.push(...request.headers)
  return headers
}

/** The innermost `Send`: one POST through the gateway's agent, errors mapped to GatewayErrors. */
export function createSend(dispatcher: Dispatcher): Send {
  return async (request) => {
    const { model } = request
    const { upstream } = model
    let response: Dispatcher.ResponseData
    try {
      response = await dispatcher.request({
        origin: upstream.origin,
        path: upstream.dialect.upstreamPath(upstream.basePath, model.upstreamModel, request.operation, request.stream),
        method: 'POST',
        headers: upstreamHeaders(request),
        body: request.body,
        signal: request.signal,
      })
    } catch (error) {
      throw upstreamFailure(error)
    }
    const encoding = response.headers['content-encoding']
    if (encoding === undefined) return response
    return { statusCode: response.statusCode, headers: response.headers, body: decodedBody(response.body, encoding) }
  }
}
