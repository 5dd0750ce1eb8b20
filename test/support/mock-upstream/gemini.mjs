// The Gemini generate-content wire format: routes, key errors, replies, and both stream framings.

import { send, stream } from './respond.mjs'
import { chunkCount, isObject, JSON_TYPE, replyText, splitText, tokens } from './shared.mjs'

const SSE_TYPE_GEMINI = 'text/event-stream'

/** Content type Google sends its JSON answers (errors included) with. */
export const GEMINI_JSON_TYPE = 'application/json; charset=UTF-8'

/** A generate-content route; captures the model and the method. */
export const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/

const GOOGLE_STATUS = /** @type {Record<number, string>} */ ({
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
})

/** @param {number} status @param {string} message */
function googleError(status, message) {
  return { error: { code: status, message, status: GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } }
}

/** Body Google answers a request without any key with. */
export const GOOGLE_MISSING_KEY = JSON.stringify(
  googleError(
    401,
    'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  ),
)

/** Body Google answers a wrong key with (a 400, not a 401). */
export const GOOGLE_BAD_KEY = JSON.stringify({
  error: {
    code: 400,
    message: 'API key not valid. Please pass a valid API key.',
    status: 'INVALID_ARGUMENT',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ],
  },
})

/** Body Google answers a request body that is not a JSON object with. */
export const GOOGLE_BAD_JSON = JSON.stringify(googleError(400, 'Invalid JSON payload received.'))

/**
 * Answer an error in Google's shape.
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st @param {number} status @param {string} message
 */
export function sendGoogleError(res, st, status, message) {
  send(res, st, status, GEMINI_JSON_TYPE, JSON.stringify(googleError(status, message)))
}

/** Text of a Gemini content object's parts. @param {unknown} content */
function geminiText(content) {
  if (!isObject(content) || !Array.isArray(content.parts)) return ''
  let s = ''
  for (const p of content.parts) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/**
 * Answer a generate-content request: 400 without `contents`, else the reply, whole or streamed.
 * @param {RegExpExecArray} route A match of `GEMINI_PATH`. @param {URLSearchParams | null} params The query.
 * @param {Record<string, any>} body @param {Record<string, any>} ctl
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st
 * @param {() => number} nextSeq Numbers ids uniquely per server; called only for a reply.
 */
export function answerGenerate(route, params, body, ctl, res, st, nextSeq) {
  if (!Array.isArray(body.contents)) {
    sendGoogleError(res, st, 400, '* GenerateContentRequest.contents: contents is not specified\n')
    return
  }
  let model = /** @type {string} */ (route[1])
  try {
    model = decodeURIComponent(model)
  } catch {}
  const method = /** @type {'generateContent' | 'streamGenerateContent'} */ (route[2])
  geminiGenerate(model, method, params?.get('alt') === 'sse', body, ctl, res, st, nextSeq())
}

/**
 * @param {string} model @param {'generateContent' | 'streamGenerateContent'} method @param {boolean} sse
 * @param {Record<string, any>} body @param {Record<string, any>} ctl
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st @param {number} seq
 */
function geminiGenerate(model, method, sse, body, ctl, res, st, seq) {
  const responseId = `mock-resp-${seq}`
  let promptLen = geminiText(body.systemInstruction).length
  let lastUser = ''
  for (const c of body.contents) {
    const t = geminiText(c)
    promptLen += t.length
    if (isObject(c) && (c.role === undefined || c.role === 'user')) lastUser = t
  }
  const text = replyText(ctl, lastUser)
  const prompt = tokens(promptLen)
  const candidates = tokens(text.length)
  const usageMetadata = {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
  }
  if (isObject(ctl.usage)) Object.assign(usageMetadata, ctl.usage)

  if (method === 'generateContent') {
    const out = {
      candidates: [{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata,
      modelVersion: model,
      responseId,
    }
    send(res, st, 200, JSON_TYPE, JSON.stringify(out))
    return
  }

  const pieces = splitText(text, Math.max(1, chunkCount(ctl)))
  const last = pieces.length - 1
  const frames = pieces.map((piece, i) => {
    /** @type {Record<string, unknown>} */
    const cand = { content: { parts: [{ text: piece }], role: 'model' }, index: 0 }
    /** @type {Record<string, unknown>} */
    const obj = { candidates: [cand] }
    if (i === last) {
      cand.finishReason = 'STOP'
      obj.usageMetadata = usageMetadata
    }
    obj.modelVersion = model
    obj.responseId = responseId
    const json = JSON.stringify(obj)
    if (sse) return `data: ${json}\r\n\r\n`
    // JSON array streamed progressively, as Google does without alt=sse.
    return (i === 0 ? '[' : ',\r\n') + json + (i === last ? ']' : '')
  })
  stream(res, st, sse ? SSE_TYPE_GEMINI : GEMINI_JSON_TYPE, frames, ctl)
}
