// Azure OpenAI on the mock: the v1 API (`/openai/v1/…`, the model in the body) and the deployments API
// (`/openai/deployments/{deployment}/…?api-version=`), checked as Azure checks them (an `api-key`, or an Entra ID
// access token as Bearer, expired JWTs refused; an `api-version` for the deployments API), then answered as the
// OpenAI route they are. Azure's content filter is a control of its own (`content_filter`).

import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { type State, send, stream } from './respond.js'
import { JSON_TYPE, type JsonObject } from './shared.js'

/** Azure OpenAI's checks on the mock. */
export interface AzureMockOptions {
  /** The `api-key` Azure paths take (also as Bearer on the v1 API, as Azure does). @default `startMockUpstream.apiKey` */
  apiKey?: string
  /** Whether an Entra ID access token sent as Bearer is good; a JWT past its `exp` is refused whatever it says. @default none is accepted */
  acceptsToken?: (token: string) => boolean
}

/** An Azure request: the OpenAI path it is answered as and the deployment its path names, or Azure's refusal. */
export type AzureRoute = { path: string; deployment: string | undefined } | { status: number; body: string }

const NOT_FOUND = { status: 404, body: JSON.stringify({ error: { code: '404', message: 'Resource not found' } }) }
const BAD_KEY = JSON.stringify({
  error: {
    code: '401',
    message:
      'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  },
})
const BAD_TOKEN = JSON.stringify({
  error: {
    code: '401',
    message:
      'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.',
  },
})

const V1 = /^\/openai\/v1\/(chat\/completions|responses|embeddings)$/
const DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/

/** Whether a JWT's `exp` has passed; false for a token that is not a JWT. */
function expired(token: string): boolean {
  const payload = token.split('.')[1]
  if (payload === undefined) return false
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp
    return typeof exp === 'number' && exp * 1000 <= Date.now()
  } catch {
    return false
  }
}

/** Azure's refusal of a request's credentials, or undefined when they are good (or the mock checks none). */
function authProblem(headers: IncomingHttpHeaders, v1: boolean, key: string | undefined, options: AzureMockOptions): string | undefined {
  if (key === undefined && options.acceptsToken === undefined) return undefined
  const apiKey = headers['api-key']
  if (apiKey !== undefined) return apiKey === key ? undefined : BAD_KEY
  const token = /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1]
  if (token === undefined) return BAD_KEY
  // The v1 API takes the key as a Bearer token too, as OpenAI's own clients send it.
  if (v1 && token === key) return undefined
  return options.acceptsToken?.(token) === true && !expired(token) ? undefined : BAD_TOKEN
}

/** Routes and checks one request on an Azure path (`/openai/…`). */
export function azureRoute(
  method: string,
  pathname: string,
  query: string,
  headers: IncomingHttpHeaders,
  key: string | undefined,
  options: AzureMockOptions = {},
): AzureRoute {
  if (method !== 'POST') return NOT_FOUND
  const v1 = V1.exec(pathname)
  const deployment = v1 === null ? DEPLOYMENT.exec(pathname) : null
  const responses = pathname === '/openai/responses'
  if (v1 === null && deployment === null && !responses) return NOT_FOUND
  if (v1 === null) {
    const version = new URLSearchParams(query).get('api-version')
    if (version === null) return NOT_FOUND
    if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(version)) {
      return { status: 400, body: JSON.stringify({ error: { code: 'BadRequest', message: 'API version not supported' } }) }
    }
  }
  const problem = authProblem(headers, v1 !== null, options.apiKey ?? key, options)
  if (problem !== undefined) return { status: 401, body: problem }
  const operation = v1?.[1] ?? deployment?.[2] ?? 'responses'
  return { path: `/v1/${operation}`, deployment: deployment === null ? undefined : decodeURIComponent(deployment[1] as string) }
}

/** Azure's verdicts on a prompt: everything safe but what `filtered` names. */
function filterResults(filtered: string | undefined, severity: string): JsonObject {
  const results: JsonObject = {}
  for (const category of ['hate', 'self_harm', 'sexual', 'violence']) {
    results[category] = category === filtered ? { filtered: true, severity } : { filtered: false, severity: 'safe' }
  }
  results.jailbreak = { filtered: false, detected: false }
  return results
}

/** The 400 Azure answers a prompt its content filter refused with. */
export const PROMPT_FILTERED = {
  error: {
    message:
      "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
    type: null,
    param: 'prompt',
    code: 'content_filter',
    status: 400,
    innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: filterResults('violence', 'medium') },
  },
}

/**
 * Answers a call the `content_filter` control asks Azure's filter to stop: `'prompt'` is its 400 (any API),
 * `'completion'` a chat answer cut with `finish_reason: content_filter` (streamed as Azure streams: a first chunk with
 * no choice but the prompt's verdicts). False when the control asks for neither, or a cut of another API than chat.
 */
export function answerContentFilter(
  body: JsonObject,
  ctl: JsonObject,
  res: ServerResponse,
  st: State,
  nextSeq: () => number,
  chat: boolean,
): boolean {
  if (ctl.content_filter === 'prompt') {
    send(res, st, 400, JSON_TYPE, JSON.stringify(PROMPT_FILTERED))
    return true
  }
  if (ctl.content_filter !== 'completion' || !chat) return false
  const head = { id: `chatcmpl-azure-${nextSeq()}`, created: 1751631441, model: String(body.model) }
  const prompt = [{ prompt_index: 0, content_filter_results: filterResults(undefined, 'safe') }]
  const verdict = filterResults('violence', 'high')
  const usage = { prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 }
  if (body.stream !== true) {
    const choice = {
      index: 0,
      finish_reason: 'content_filter',
      message: { role: 'assistant', content: null },
      content_filter_results: verdict,
    }
    const answer = { ...head, object: 'chat.completion', prompt_filter_results: prompt, choices: [choice], usage }
    send(res, st, 200, JSON_TYPE, JSON.stringify(answer))
    return true
  }
  const chunk = (fields: JsonObject) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', ...fields })}\n\n`
  const frames = [
    `data: ${JSON.stringify({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: prompt })}\n\n`,
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', content_filter_results: verdict }] }),
  ]
  const options = body.stream_options as JsonObject | undefined
  if (options?.include_usage === true) frames.push(chunk({ choices: [], usage }))
  frames.push('data: [DONE]\n\n')
  stream(res, st, 'text/event-stream; charset=utf-8', frames, ctl)
  return true
}
