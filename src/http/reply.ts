import type { ServerResponse } from 'node:http'
import type { Dialect } from '../dialects/index.js'
import { type GatewayError, type HttpErrorCode, STATUS_BY_CODE } from '../errors.js'

/** Writes a JSON body with its length; a no-op when the client has already gone. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.destroy()
    return
  }
  sendJsonText(res, status, JSON.stringify(body), headers)
}

/** Like `sendJson`, for a body already serialised. */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.destroy()
    return
  }
  res.statusCode = status
  res.setHeader('content-type', 'application/json; charset=utf-8')
  res.setHeader('content-length', Buffer.byteLength(text))
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.end(text)
}

/** Codes the Recoveries API answers in its own shape, `{ …details, message, reason }`, with these reasons. */
const RECOVERY_REASONS: Partial<Record<HttpErrorCode, string>> = {
  recovery_not_found: 'RECOVERY_NOT_FOUND',
  confirmation_required: 'CONFIRMATION_REQUIRED',
  invalid_parameter: 'INVALID_PARAMETER',
}

/** Answers with a request error in the shape its route speaks: the Recoveries shape or the path's dialect. */
export function sendError(res: ServerResponse, error: GatewayError, to: { dialect: Dialect; requestId: string }): void {
  // A construction error never reaches a request; should one, it is the gateway's fault.
  const code: HttpErrorCode = error.code === 'invalid_options' ? 'internal_error' : error.code
  const status = STATUS_BY_CODE[code]
  const reason = RECOVERY_REASONS[code]
  if (reason !== undefined) {
    sendJson(res, status, { ...error.details, message: error.message, reason })
    return
  }
  const headers: Record<string, string> = error.headers ? { ...error.headers } : {}
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds)
  if (error.shouldRetry) headers['x-should-retry'] = 'true'
  // The rest of such a body is not worth reading: the connection ends with this answer.
  if (code === 'request_too_large' || code === 'request_timeout' || code === 'overloaded') headers.connection = 'close'
  const facts = { status, code, message: error.message, param: error.param, requestId: to.requestId }
  if (to.dialect.errorHeaders) Object.assign(headers, to.dialect.errorHeaders(facts))
  sendJson(res, to.dialect.errorStatus?.(status) ?? status, to.dialect.errorBody(facts), headers)
}
