// The errors of the conformance matrix, in each error shape: the gateway's own (auth, validation, routing, limits,
// deadlines, repeats, a failed upstream) and upstream errors passed through or translated.
import { chatBody, geminiBody } from '../support/bodies.js'
import { type Case, GEMINI_MODEL, generatePath, googleHeaders, modelFor, openaiHeaders } from './cases.js'

/** The body size the matrix's gateway refuses above (`limits.maxRequestBytes`). */
export const MAX_REQUEST_BYTES = 256 * 1024

/** One call in each shape: the chat route for OpenAI's, the generate-content route for Google's. */
interface Pair {
  what: string
  /** The OpenAI-shaped call's path, headers, body and extras. */
  openai: Partial<Case>
  google: Partial<Case>
}

const big = 'x'.repeat(MAX_REQUEST_BYTES + 1024)

/** The gateway's own errors, each in both shapes. */
const OWN: Pair[] = [
  { what: 'no key', openai: { headers: {} }, google: { headers: {} } },
  {
    what: 'invalid body',
    openai: { body: chatBody('x', { temperature: 3 }) },
    google: { body: { contents: [] } },
  },
  {
    what: 'unknown model',
    openai: { body: chatBody('x', { model: 'no-such-model' }) },
    google: { path: generatePath('no-such-model', false) },
  },
  { what: 'unknown path', openai: { path: '/v1/no/such/path' }, google: { path: '/v1beta/no/such/path' } },
  { what: 'wrong method', openai: { method: 'GET', body: undefined }, google: { method: 'GET', body: undefined } },
  {
    what: 'not json',
    openai: { headers: { ...openaiHeaders, 'content-type': 'text/plain' }, body: JSON.stringify(chatBody('x')) },
    google: { headers: { ...googleHeaders, 'content-type': 'text/plain' }, body: JSON.stringify(geminiBody('x')) },
  },
  { what: 'body too large', openai: { body: chatBody(big) }, google: { body: geminiBody(big) } },
  { what: 'body too slow', openai: { stall: true }, google: { stall: true } },
  {
    what: 'idempotency key reused',
    openai: { headers: { ...openaiHeaders, 'idempotency-key': 'conformance-openai' }, prior: chatBody('first'), body: chatBody('second') },
    google: {
      headers: { ...googleHeaders, 'idempotency-key': 'conformance-google' },
      prior: geminiBody('first'),
      body: geminiBody('second'),
    },
  },
  { what: 'upstream unreachable', openai: { steer: { destroy: true } }, google: { steer: { destroy: true } } },
  { what: 'upstream timeout', openai: { steer: { hang: true } }, google: { steer: { hang: true } } },
]

/** The OpenAI-shaped and Google-shaped call of each pair, on a model of the client's own format unless it says. */
function cases(pair: Pair): Case[] {
  const marker = `conformance error ${pair.what}`
  return [
    {
      name: `error openai ${pair.what}`,
      path: '/v1/chat/completions',
      headers: openaiHeaders,
      body: chatBody(marker),
      marker,
      ...pair.openai,
      expect: { kind: 'error', shape: 'openai' },
    },
    {
      name: `error google ${pair.what}`,
      path: generatePath(GEMINI_MODEL, false),
      headers: googleHeaders,
      body: geminiBody(marker),
      marker,
      ...pair.google,
      expect: { kind: 'error', shape: 'google' },
    },
  ]
}

/** Statuses an upstream answers errors with that the matrix sends through each route. */
const UPSTREAM_STATUSES = [400, 401, 404, 413, 422, 429, 500, 502, 503]

/** Upstream errors: passed through as the upstream sent them, or translated into the client's shape. */
function upstreamErrors(): Case[] {
  const out: Case[] = []
  for (const mode of ['passthrough', 'translated']) {
    // A passthrough error is the upstream's own body: the mock's, in the statuses its APIs answer with.
    const statuses = mode === 'passthrough' ? [400, 429, 500, 503] : UPSTREAM_STATUSES
    for (const status of statuses) {
      const marker = `conformance upstream ${mode} ${status}`
      out.push(
        {
          name: `error openai upstream ${mode} ${status}`,
          path: '/v1/chat/completions',
          headers: openaiHeaders,
          body: chatBody(marker, { model: modelFor('openai', mode) }),
          marker,
          steer: { status },
          expect: { kind: 'error', shape: 'openai' },
        },
        {
          name: `error google upstream ${mode} ${status}`,
          path: generatePath(modelFor('google', mode), false),
          headers: googleHeaders,
          body: geminiBody(marker),
          marker,
          steer: { status },
          expect: { kind: 'error', shape: 'google' },
        },
      )
    }
    out.push({
      name: `error responses upstream ${mode} 429`,
      path: '/v1/responses',
      headers: openaiHeaders,
      body: { model: modelFor('openai', mode), input: `conformance responses ${mode} 429` },
      marker: `conformance responses ${mode} 429`,
      steer: { status: 429 },
      expect: { kind: 'error', shape: 'openai' },
    })
  }
  return out
}

/** Every error case of the matrix. */
export function errorCases(): Case[] {
  return [...OWN.flatMap(cases), ...upstreamErrors()]
}
