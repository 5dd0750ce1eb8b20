// The OpenAI chat-completions wire format: model list, error bodies, replies and their SSE stream.

import { send, stream } from './respond.mjs'
import { chunkCount, isObject, JSON_TYPE, num, replyText, splitText, tokens } from './shared.mjs'

const SSE_TYPE_OPENAI = 'text/event-stream; charset=utf-8'

/** Body of `GET /v1/models`, serialised once. */
export const MODELS_BODY = JSON.stringify({
  object: 'list',
  data: [
    { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
    { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
    { id: 'gpt-4.1-mini', object: 'model', created: 1744318173, owned_by: 'system' },
  ],
})

/** Body OpenAI answers a missing or wrong key with. */
export const OPENAI_AUTH_ERROR = JSON.stringify({
  error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
})

/** @param {number} status */
function openaiErrorType(status) {
  if (status === 401) return 'invalid_request_error'
  if (status === 429) return 'rate_limit_exceeded'
  if (status >= 500) return 'server_error'
  return 'invalid_request_error'
}

/** @param {number} status @param {string} message @param {string | null} [code] */
function openaiError(status, message, code = null) {
  return { error: { message, type: openaiErrorType(status), param: null, code } }
}

/** Body OpenAI answers a request body that is not a JSON object with. */
export const OPENAI_BAD_JSON = JSON.stringify(
  openaiError(
    400,
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
  ),
)

/**
 * Answer an error in OpenAI's shape.
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st
 * @param {number} status @param {string} message @param {string | null} [code]
 */
export function sendOpenaiError(res, st, status, message, code = null) {
  send(res, st, status, JSON_TYPE, JSON.stringify(openaiError(status, message, code)))
}

/** Text of an OpenAI message content (string or array of parts). @param {unknown} content */
function openaiText(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let s = ''
  for (const p of content) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/**
 * Answer a chat-completions request: 400 without `model` or `messages`, else the completion, whole or streamed.
 * @param {Record<string, any>} body @param {Record<string, any>} ctl
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st
 * @param {() => number} nextSeq Numbers ids uniquely per server; called only for a reply.
 */
export function answerChat(body, ctl, res, st, nextSeq) {
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    const msg = typeof body.model !== 'string' ? 'you must provide a model parameter' : "Missing required parameter: 'messages'."
    sendOpenaiError(res, st, 400, msg)
    return
  }
  openaiCompletion(body, ctl, res, st, nextSeq())
}

/** @param {Record<string, any>} body @param {Record<string, any>} ctl @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st @param {number} seq */
function openaiCompletion(body, ctl, res, st, seq) {
  const id = `chatcmpl-mock-${seq}`
  const created = Math.floor(Date.now() / 1000)
  const model = body.model
  const n = Math.max(1, Math.min(128, Math.floor(num(body.n) ?? 1)))
  let promptLen = 0
  let lastUser = ''
  for (const m of body.messages) {
    if (!isObject(m)) continue
    const t = openaiText(m.content)
    promptLen += t.length
    if (m.role === 'user') lastUser = t
  }
  const content = replyText(ctl, lastUser)
  const prompt = tokens(promptLen)
  const completion = tokens(content.length) * n
  const usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
  if (isObject(ctl.usage)) Object.assign(usage, ctl.usage)

  if (body.stream !== true) {
    const choices = []
    for (let i = 0; i < n; i++) {
      choices.push({
        index: i,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      })
    }
    const out = {
      id,
      object: 'chat.completion',
      created,
      model,
      choices,
      usage,
      service_tier: 'default',
      system_fingerprint: null,
    }
    send(res, st, 200, JSON_TYPE, JSON.stringify(out))
    return
  }

  const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true
  /** @param {unknown[]} choices @param {unknown} [u] */
  const frame = (choices, u) => {
    /** @type {Record<string, unknown>} */
    const c = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: null,
      choices,
    }
    if (includeUsage) c.usage = u ?? null
    return `data: ${JSON.stringify(c)}\n\n`
  }
  const pieces = splitText(content, chunkCount(ctl))
  const frames = []
  for (let i = 0; i < n; i++) {
    frames.push(frame([{ index: i, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]))
  }
  for (const p of pieces) {
    for (let i = 0; i < n; i++) {
      frames.push(frame([{ index: i, delta: { content: p }, logprobs: null, finish_reason: null }]))
    }
  }
  for (let i = 0; i < n; i++) {
    frames.push(frame([{ index: i, delta: {}, logprobs: null, finish_reason: 'stop' }]))
  }
  if (includeUsage) frames.push(frame([], usage))
  frames.push('data: [DONE]\n\n')
  stream(res, st, SSE_TYPE_OPENAI, frames, ctl)
}
