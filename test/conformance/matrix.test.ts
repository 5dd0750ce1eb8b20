// The conformance tier: real calls through a real gateway in front of the mock upstream, every body and every SSE
// event's data checked against the providers' published schemas (transcribed in schemas/), for every endpoint
// the gateway serves, passthrough and translated, whole and streamed, and the errors of each shape.
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXTURE_MODELS, type Fixture, fixtureUpstreams, startFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'
import { anthropicErrorCases, anthropicModelCases, CLAUDE_OPTIONS, claudeUpstream, messagesCases } from './anthropic-cases.js'
import { backgroundCases, brokenStreamCases, type Case, modelCallCases, modelListCases, passthroughOnlyCases } from './cases.js'
import {
  checkAnthropicError,
  checkChatStream,
  checkGeminiStream,
  checkGoogleError,
  checkMessagesStream,
  checkResponsesStream,
  Tally,
} from './check.js'
import { errorCases, MAX_REQUEST_BYTES } from './error-cases.js'
import { accounts, QUIRKS } from './quirks.js'
import * as anthropic from './schemas/anthropic.js'
import * as google from './schemas/google.js'
import * as openai from './schemas/openai.js'

/** The schema of each whole answer. */
const BODY_SCHEMAS = {
  chat: openai.createChatCompletionResponse,
  response: openai.response,
  embeddings: openai.createEmbeddingResponse,
  generate: google.generateContentResponse,
  embed: google.embedContentResponse,
  batchEmbed: google.batchEmbedContentsResponse,
  countTokens: google.countTokensResponse,
  'openai-list': openai.listModelsResponse,
  'openai-model': openai.model,
  'google-list': google.listModelsResponse,
  'google-model': google.model,
  message: anthropic.message,
  'anthropic-list': anthropic.modelPage,
  'anthropic-model': anthropic.modelInfo,
}

const tally = new Tally()
let fx: Fixture

beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number], (mockUrl) => ({
    // A Claude model on the mock upstream's Anthropic side besides the fixture's, for Anthropic's passthrough calls.
    upstreams: { ...fixtureUpstreams(mockUrl), claude: claudeUpstream(mockUrl) },
    models: [...FIXTURE_MODELS, CLAUDE_OPTIONS],
    limits: { maxRequestBytes: MAX_REQUEST_BYTES },
    timeouts: { upstreamMs: 1500, requestBodyMs: 500 },
  }))
})
afterAll(() => fx.close())

/** An answer as the matrix reads it. */
interface Answer {
  status: number
  text: string
  json: unknown
  headers: Record<string, string | string[] | undefined>
}

/** Sends the head and half the body of `c`, then waits for the gateway's answer. */
function stalled(c: Case): Promise<Answer> {
  const text = JSON.stringify(c.body)
  return new Promise((resolve, reject) => {
    const headers = { ...c.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }
    const req = http.request(`${fx.url}${c.path}`, { method: 'POST', headers, agent: false })
    req.on('error', reject)
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, text: body, json: JSON.parse(body), headers: res.headers })
      })
    })
    req.write(text.slice(0, text.length >> 1))
  })
}

/** Makes the call of `c` (its prior call first), steering the mock upstream for it alone. */
async function send(c: Case): Promise<Answer> {
  if (c.steer && c.marker) fx.mock.steer(c.marker, c.steer)
  try {
    if (c.prior !== undefined) {
      tally.requests++
      expect((await call(`${fx.url}${c.path}`, { headers: c.headers, body: c.prior })).status).toBe(200)
    }
    tally.requests++
    if (c.stall) return await stalled(c)
    return await call(`${fx.url}${c.path}`, { method: c.method, headers: c.headers, body: c.body })
  } finally {
    if (c.marker) fx.mock.steer(c.marker, undefined)
  }
}

/** The request id an answer's `request-id` header says (the one the Anthropic SDK reports). */
function requestId(res: Answer): string | undefined {
  const header = res.headers['request-id']
  return typeof header === 'string' ? header : undefined
}

/** Checks the answer of `c` as its case says. */
function check(c: Case, res: Answer): void {
  const expected = c.expect
  if (expected.kind === 'error') {
    expect(res.status, res.text).toBeGreaterThanOrEqual(400)
    if (c.status !== undefined) expect(res.status).toBe(c.status)
    if (expected.shape === 'openai') tally.check(c.name, 'body', openai.errorResponse, res.json)
    else if (expected.shape === 'anthropic') checkAnthropicError(tally, c.name, requestId(res), res.json)
    else checkGoogleError(tally, c.name, res.status, res.json)
    return
  }
  expect(res.status, res.text).toBe(200)
  if (expected.kind === 'json') tally.check(c.name, 'body', BODY_SCHEMAS[expected.schema], res.json)
  else if (expected.kind === 'models') tally.check(c.name, 'body', BODY_SCHEMAS[expected.shape], res.json)
  else if (expected.kind === 'chat-stream') checkChatStream(tally, c.name, res.text, expected.includeUsage)
  else if (expected.kind === 'responses-stream') checkResponsesStream(tally, c.name, res.text)
  else if (expected.kind === 'messages-stream') checkMessagesStream(tally, c.name, res.text, requestId(res))
  else checkGeminiStream(tally, c.name, res.text)
}

const groups: [string, Case[]][] = [
  ['model calls', modelCallCases()],
  ['Messages calls', messagesCases()],
  ['streams broken off upstream', brokenStreamCases()],
  ['background responses', backgroundCases()],
  ['embeddings and token counts', passthroughOnlyCases()],
  ['model lists', [...modelListCases(), ...anthropicModelCases()]],
  ['errors', [...errorCases(), ...anthropicErrorCases()]],
]

for (const [title, cases] of groups) {
  describe(`conformance: ${title}`, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const before = tally.violations.length
      check(c, await send(c))
      const found = tally.violations.slice(before)
      // Every violation is a known quirk, and every quirk this case is known for still shows.
      expect(found.filter((violation) => !QUIRKS.some((quirk) => accounts(quirk, violation)))).toEqual([])
      for (const quirk of QUIRKS.filter((q) => q.cases.test(c.name))) {
        expect(
          found.some((violation) => accounts(quirk, violation)),
          `${quirk.id} no longer shows: take it off the quirks`,
        ).toBe(true)
      }
    })
  })
}

describe('conformance: the tally', () => {
  it('validated bodies and events of every case, and every quirk still shows somewhere', () => {
    const cases = groups.reduce((sum, [, list]) => sum + list.length, 0)
    expect(tally.requests).toBeGreaterThanOrEqual(cases)
    expect(tally.bodies + tally.events).toBeGreaterThan(cases)
    for (const quirk of QUIRKS)
      expect(
        tally.violations.some((v) => accounts(quirk, v)),
        quirk.id,
      ).toBe(true)
    const quirks = new Set(tally.violations.map((v) => QUIRKS.find((q) => accounts(q, v))?.id))
    console.info(
      `conformance: ${cases} cases, ${tally.requests} requests, ${tally.bodies} bodies and ${tally.events} events validated, ` +
        `${tally.violations.length} violations, all known quirks (${quirks.size} of them)`,
    )
  })
})
