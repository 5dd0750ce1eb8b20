import type { ServerResponse } from 'node:http'
import { GatewayError, type GatewayErrorCode, STATUS_BY_CODE } from './errors.js'

/** Which error body shape a route answers with: OpenAI's for `/v1`, Google's for `/v1beta`. */
export type ErrorFamily = 'openai' | 'gemini'

const GOOGLE_STATUS: Partial<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

/** Writes a JSON body with its length; a no-op when the client has already gone. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.destroy()
    return
  }
  const text = JSON.stringify(body)
  res.statusCode = status
  res.setHeader('content-type', 'application/json; charset=utf-8')
  res.setHeader('content-length', Buffer.byteLength(text))
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.end(text)
}

/** The error body of a family for a status, code and message. */
export function errorBody(family: ErrorFamily, code: GatewayErrorCode, message: string, param?: string): unknown {
  const status = STATUS_BY_CODE[code]
  if (family === 'gemini') {
    return { error: { code: status, message, status: GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT') } }
  }
  return {
    error: {
      message,
      type: status >= 500 ? 'api_error' : 'invalid_request_error',
      param: param ?? null,
      code,
    },
  }
}

/** Answers with a GatewayError in the route family's shape. */
export function sendError(res: ServerResponse, family: ErrorFamily, error: GatewayError): void {
  const headers: Record<string, string> = {}
  if (error.code === 'request_too_large') headers.connection = 'close'
  sendJson(res, error.status, errorBody(family, error.code, error.message, error.param), headers)
}
