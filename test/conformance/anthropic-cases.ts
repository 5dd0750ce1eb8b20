// The Anthropic side of the conformance matrix: Messages calls passthrough (to a Claude model on the mock upstream)
// and translated (to its OpenAI and Gemini models), whole and streamed, with text and with a tool call, streams
// broken off, the model list, and errors in Anthropic's shape: the gateway's own and upstream ones.
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { type Case, GEMINI_MODEL, OPENAI_MODEL } from './cases.js'
import { MAX_REQUEST_BYTES } from './error-cases.js'

/** The Claude model of the matrix's gateway, on the mock upstream's Anthropic side. */
export const CLAUDE_MODEL = 'claude-sonnet-4-5'

/** The upstream and model the matrix adds for Anthropic's passthrough calls, on the mock upstream at `mockUrl`. */
export const claudeUpstream = (mockUrl: string) => ({ type: 'anthropic' as const, baseUrl: mockUrl, apiKey: UPSTREAM_KEY })
/** The Claude model's options: its token limits and release time configured, as Anthropic's model objects tell them. */
export const CLAUDE_OPTIONS = { id: CLAUDE_MODEL, upstream: 'claude', created: 1760486400, contextWindow: 200_000, maxOutputTokens: 64_000 }

/** What an Anthropic client sends: its key and the API version. */
export const anthropicHeaders = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }

const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
const tools = [{ name: 'get_weather', description: 'The weather in a city.', input_schema: WEATHER }]

/** A Messages body. */
const messagesBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: CLAUDE_MODEL,
  max_tokens: 256,
  messages: [{ role: 'user', content: text }],
  ...extra,
})

/** The model of each way a Messages call goes: to Claude as it is, or translated to OpenAI or Gemini. */
const ROUTES: [string, string][] = [
  ['passthrough', CLAUDE_MODEL],
  ['translated', OPENAI_MODEL],
  ['translated-gemini', GEMINI_MODEL],
]

/** Messages calls: passthrough/translated × JSON/stream × text/tool, and streams broken off after two frames. */
export function messagesCases(): Case[] {
  const cases: Case[] = []
  for (const [mode, model] of ROUTES) {
    for (const variant of ['text', 'tool']) {
      for (const stream of [false, true]) {
        const say = `conformance messages ${mode} ${variant}`
        cases.push({
          name: `messages ${mode} ${stream ? 'stream' : 'json'} ${variant}`,
          path: '/v1/messages',
          headers: anthropicHeaders,
          body: messagesBody(say, { model, ...(stream ? { stream: true } : {}), ...(variant === 'tool' ? { tools } : {}) }),
          expect: stream ? { kind: 'messages-stream' } : { kind: 'json', schema: 'message' },
        })
      }
    }
    const broken = `conformance messages ${mode} broken`
    cases.push({
      name: `messages ${mode} stream broken`,
      path: '/v1/messages',
      headers: anthropicHeaders,
      body: messagesBody(broken, { model, stream: true }),
      marker: broken,
      steer: { chunks: 6, destroy_after_frames: 2 },
      expect: { kind: 'messages-stream' },
    })
  }
  return cases
}

/** The model list and one model, in Anthropic's shape (a model of each upstream). */
export function anthropicModelCases(): Case[] {
  return [
    { name: 'models anthropic list', path: '/v1/models', headers: anthropicHeaders, expect: { kind: 'models', shape: 'anthropic-list' } },
    ...[CLAUDE_MODEL, GEMINI_MODEL].map(
      (model): Case => ({
        name: `models anthropic one ${model}`,
        path: `/v1/models/${model}`,
        headers: anthropicHeaders,
        expect: { kind: 'models', shape: 'anthropic-model' },
      }),
    ),
  ]
}

const big = 'x'.repeat(MAX_REQUEST_BYTES + 1024)

/** The gateway's own errors, in Anthropic's shape: as the other shapes have them (see error-cases.ts). */
const OWN: [string, Partial<Case>][] = [
  ['no key', { headers: { 'anthropic-version': '2023-06-01' } }],
  ['invalid body', { body: messagesBody('x', { temperature: 3 }) }],
  ['unknown model', { body: messagesBody('x', { model: 'no-such-model' }) }],
  ['unknown path', { path: '/v1/no/such/path' }],
  ['wrong method', { method: 'GET', body: undefined }],
  ['not json', { headers: { ...anthropicHeaders, 'content-type': 'text/plain' }, body: JSON.stringify(messagesBody('x')) }],
  ['body too large', { body: messagesBody(big) }],
  ['body too slow', { stall: true }],
  [
    'idempotency key reused',
    {
      headers: { ...anthropicHeaders, 'idempotency-key': 'conformance-anthropic' },
      prior: messagesBody('first'),
      body: messagesBody('second'),
    },
  ],
  ['upstream unreachable', { steer: { destroy: true } }],
  ['upstream timeout', { steer: { hang: true } }],
]

/** Statuses the upstreams answer errors with: Anthropic's own passed through, the others' translated. */
const PASSTHROUGH_STATUSES = [400, 429, 500, 529]
const TRANSLATED_STATUSES = [400, 401, 404, 413, 422, 429, 500, 502, 503]

/** Every error case in Anthropic's shape. */
export function anthropicErrorCases(): Case[] {
  const out: Case[] = OWN.map(([what, extra]) => {
    const marker = `conformance anthropic error ${what}`
    return {
      name: `error anthropic ${what}`,
      path: '/v1/messages',
      headers: anthropicHeaders,
      body: messagesBody(marker),
      marker,
      ...extra,
      expect: { kind: 'error', shape: 'anthropic' },
    }
  })
  for (const [mode, model] of ROUTES) {
    for (const status of mode === 'passthrough' ? PASSTHROUGH_STATUSES : TRANSLATED_STATUSES) {
      const marker = `conformance anthropic upstream ${mode} ${status}`
      out.push({
        name: `error anthropic upstream ${mode} ${status}`,
        path: '/v1/messages',
        headers: anthropicHeaders,
        body: messagesBody(marker, { model }),
        marker,
        steer: { status },
        expect: { kind: 'error', shape: 'anthropic' },
      })
    }
  }
  return out
}
