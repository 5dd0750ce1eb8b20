// A gateway with priced models of every dialect in front of one mock upstream, for the ledger's tests.
import { expect } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { bearer, KEY_A, UPSTREAM_KEY } from './fixture.js'
import { goog } from './gemini.js'
import { serve } from './servers.js'

/** Prices chosen with decimals a float would not hold exactly. */
export const PRICING = {
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'gemini-2.5-flash': { input: 0.3, cachedInput: 0.03, output: 2.5, reasoning: 3.5 },
  'claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
}

/** One dialect a client speaks: where it calls, how it says who it is, and a body for the mock. */
export interface DialectCase {
  name: string
  model: keyof typeof PRICING
  path: (stream: boolean) => string
  headers: (key: string) => Record<string, string>
  body: (mock: Record<string, unknown>, stream: boolean) => Record<string, unknown>
  /** The upstream's usage, in its own words, with cached, cache-write and reasoning tokens. */
  usage: Record<string, unknown>
  /** The counts the gateway reports for `usage`. */
  counts: Pick<
    UsageEvent,
    'input_tokens' | 'output_tokens' | 'total_tokens' | 'cached_input_tokens' | 'cache_write_tokens' | 'reasoning_tokens'
  >
  /** The cost of `usage` by PRICING, in nano-dollars, worked out by hand. */
  cost: number
}

const chatUsage = {
  prompt_tokens: 1234,
  completion_tokens: 567,
  total_tokens: 1801,
  prompt_tokens_details: { cached_tokens: 1000 },
  completion_tokens_details: { reasoning_tokens: 300 },
}
const openaiCounts = {
  input_tokens: 1234,
  output_tokens: 567,
  total_tokens: 1801,
  cached_input_tokens: 1000,
  cache_write_tokens: 0,
  reasoning_tokens: 300,
}

export const DIALECTS: DialectCase[] = [
  {
    name: 'OpenAI chat completions',
    model: 'gpt-4o-mini',
    path: () => '/v1/chat/completions',
    headers: (key) => bearer(key),
    body: (mock, stream) => ({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'price me' }],
      mock,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
    usage: chatUsage,
    counts: openaiCounts,
    // 234 × 0.15 + 1000 × 0.075 + 567 × 0.6 (reasoning at the output price) = 450.3 µ$ = 450 300 n$
    cost: 450_300,
  },
  {
    name: 'OpenAI Responses',
    model: 'gpt-4o-mini',
    path: () => '/v1/responses',
    headers: (key) => bearer(key),
    body: (mock, stream) => ({ model: 'gpt-4o-mini', input: 'price me', mock, ...(stream ? { stream: true } : {}) }),
    usage: {
      input_tokens: 1234,
      input_tokens_details: { cached_tokens: 1000 },
      output_tokens: 567,
      output_tokens_details: { reasoning_tokens: 300 },
      total_tokens: 1801,
    },
    counts: openaiCounts,
    cost: 450_300,
  },
  {
    name: 'Gemini generate-content',
    model: 'gemini-2.5-flash',
    path: (stream) =>
      stream ? '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' : '/v1beta/models/gemini-2.5-flash:generateContent',
    headers: (key) => goog(key),
    body: (mock) => ({ contents: [{ role: 'user', parts: [{ text: 'price me' }] }], mock }),
    usage: {
      promptTokenCount: 1000,
      cachedContentTokenCount: 400,
      candidatesTokenCount: 100,
      thoughtsTokenCount: 200,
      totalTokenCount: 1300,
    },
    counts: {
      input_tokens: 1000,
      output_tokens: 300,
      total_tokens: 1300,
      cached_input_tokens: 400,
      cache_write_tokens: 0,
      reasoning_tokens: 200,
    },
    // 600 × 0.3 + 400 × 0.03 + 100 × 2.5 + 200 × 3.5 = 1142 µ$
    cost: 1_142_000,
  },
  {
    name: 'Anthropic Messages',
    model: 'claude-haiku-4-5',
    path: () => '/v1/messages',
    headers: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }),
    body: (mock, stream) => ({
      model: 'claude-haiku-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'price me' }],
      mock,
      ...(stream ? { stream: true } : {}),
    }),
    usage: { input_tokens: 900, cache_creation_input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 2000 },
    counts: {
      input_tokens: 1000,
      output_tokens: 2000,
      total_tokens: 3000,
      cached_input_tokens: 60,
      cache_write_tokens: 40,
      reasoning_tokens: 0,
    },
    // 900 × 1 + 60 × 0.1 + 40 × 1.25 + 2000 × 5 = 10 956 µ$
    cost: 10_956_000,
  },
]

/** A running chain: the mock, the gateway and the server it is mounted in, with what it logged and reported. */
export interface LedgerChain {
  url: string
  gateway: Gateway
  mock: MockUpstream
  usage: UsageEvent[]
  warnings: Array<{ message: string; meta?: Record<string, unknown> }>
  close(): Promise<void>
}

/** The models of every dialect on one mock upstream (or `mock`, when given), with `overrides` on top. */
export async function startLedgerChain(overrides: Partial<GatewayOptions> = {}, mock?: MockUpstream): Promise<LedgerChain> {
  const upstream = mock ?? (await startMockUpstream({ apiKey: UPSTREAM_KEY }))
  const usage: UsageEvent[] = []
  const warnings: LedgerChain['warnings'] = []
  const gateway = createGateway({
    upstreams: {
      openai: { type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: UPSTREAM_KEY },
      gemini: { type: 'gemini', baseUrl: upstream.url, apiKey: UPSTREAM_KEY },
      anthropic: { type: 'anthropic', baseUrl: upstream.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt-4o-mini', upstream: 'openai' },
      { id: 'gemini-2.5-flash', upstream: 'gemini' },
      { id: 'claude-haiku-4-5', upstream: 'anthropic' },
    ],
    auth: { apiKeys: [KEY_A] },
    pricing: PRICING,
    onUsage: (event) => usage.push(event),
    logger: {
      info() {},
      warn: (message, meta) => warnings.push({ message, meta }),
      error: (message, meta) => warnings.push({ message, meta }),
    },
    ...overrides,
  })
  const server = await serve(nodeHandler(gateway))
  return {
    url: server.url,
    gateway,
    mock: upstream,
    usage,
    warnings,
    async close() {
      await server.close()
      await gateway.close()
      if (!mock) await upstream.close()
    },
  }
}

/**
 * Waits, when the minute is near its end, for the next one to begin: the limits count in fixed minutes, and a test
 * that fills one must not see it start anew halfway (no timing is asserted; this only picks when to begin).
 */
export async function freshMinute(spareSeconds = 15): Promise<void> {
  const intoMinute = Date.now() % 60_000
  if (intoMinute < 60_000 - spareSeconds * 1000) return
  await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50))
}

/** The rate-limit headers of a 429, as a client sees them. */
export const RATE_HEADERS = [
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'anthropic-ratelimit-requests-limit',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-requests-reset',
] as const

/** Each dialect's 429 body, as its SDK reads it. */
export const LIMIT_BODIES: Record<string, unknown> = {
  'OpenAI chat completions': {
    error: expect.objectContaining({ code: 'rate_limit_exceeded', message: expect.stringMatching(/^Rate limit reached/) }),
  },
  'OpenAI Responses': {
    error: expect.objectContaining({ code: 'rate_limit_exceeded', message: expect.stringMatching(/^Rate limit reached/) }),
  },
  'Gemini generate-content': { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: expect.stringMatching(/^Rate limit reached/) } },
  'Anthropic Messages': {
    type: 'error',
    error: { type: 'rate_limit_error', message: expect.stringMatching(/^Rate limit reached/) },
    request_id: expect.any(String),
  },
}
