import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { DIALECTS, freshMinute, type LedgerChain, startLedgerChain } from '../support/ledger.js'

// A 2xx answer under owner limits tells the client where it stands, in the names its SDKs read; the upstream's own
// rate-limit headers (the gateway key's) never reach such an owner.
let chain: LedgerChain | undefined
afterEach(async () => {
  await chain?.close()
  chain = undefined
})

async function start(extra: Partial<GatewayOptions> = {}): Promise<LedgerChain> {
  await freshMinute()
  chain = await startLedgerChain(extra)
  return chain
}

/** What an upstream with its own limits sends on every answer. */
const UPSTREAM_LIMITS = {
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-requests': '9999',
  'x-ratelimit-limit-tokens': '30000000',
  'x-ratelimit-remaining-tokens': '29999000',
  'x-ratelimit-reset-requests': '6ms',
}

const OPENAI_NAMES = /^x-ratelimit-/
const ANTHROPIC_NAMES = /^anthropic-ratelimit-/
const limitHeadersOf = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => OPENAI_NAMES.test(name) || ANTHROPIC_NAMES.test(name)))

describe('rate-limit headers on answers under owner limits', () => {
  for (const d of DIALECTS) {
    const anthropic = d.model === 'claude-haiku-4-5'
    for (const stream of [false, true]) {
      it(`${d.name}${stream ? ' stream' : ''}: each 2xx carries the check's counts in ${anthropic ? 'Anthropic' : 'OpenAI'}'s names, in place of the upstream's`, async () => {
        const c = await start({ limits: { owners: { requestsPerMinute: 5, tokensPerMinute: 100_000 } } })
        const send = () =>
          call(`${c.url}${d.path(stream)}`, {
            headers: d.headers(KEY_A),
            body: d.body({ usage: d.usage, headers: UPSTREAM_LIMITS }, stream),
          })
        const first = await send()
        expect(first.status).toBe(200)
        // Its tokens are charged as the call ends, just after its client has the answer.
        await eventually(() => c.usage.length === 1)
        const second = await send()
        expect(second.status).toBe(200)
        const used = d.counts.total_tokens
        if (anthropic) {
          expect(limitHeadersOf(second.headers)).toEqual({
            'anthropic-ratelimit-requests-limit': '5',
            'anthropic-ratelimit-requests-remaining': '3',
            'anthropic-ratelimit-requests-reset': expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
            'anthropic-ratelimit-tokens-limit': '100000',
            'anthropic-ratelimit-tokens-remaining': String(100_000 - used),
            'anthropic-ratelimit-tokens-reset': expect.stringMatching(/Z$/),
          })
        } else {
          expect(limitHeadersOf(second.headers)).toEqual({
            'x-ratelimit-limit-requests': '5',
            'x-ratelimit-remaining-requests': '3',
            'x-ratelimit-reset-requests': expect.stringMatching(/^\d+s$/),
            'x-ratelimit-limit-tokens': '100000',
            'x-ratelimit-remaining-tokens': String(100_000 - used),
            'x-ratelimit-reset-tokens': expect.stringMatching(/^\d+s$/),
          })
        }
        expect(limitHeadersOf(first.headers)).toMatchObject(
          anthropic ? { 'anthropic-ratelimit-requests-remaining': '4' } : { 'x-ratelimit-remaining-requests': '4' },
        )
      })
    }
  }

  it('an upstream error answer carries the owner’s headers too, never the upstream’s, and keeps its retry-after', async () => {
    const c = await start({ limits: { owners: { requestsPerMinute: 5 } } })
    const [chat] = DIALECTS as [(typeof DIALECTS)[0]]
    const refused = await call(`${c.url}${chat.path(false)}`, {
      headers: chat.headers(KEY_A),
      body: chat.body({ status: 429, headers: { ...UPSTREAM_LIMITS, 'retry-after': '7' } }, false),
    })
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('7')
    expect(limitHeadersOf(refused.headers)).toEqual({
      'x-ratelimit-limit-requests': '5',
      'x-ratelimit-remaining-requests': '4',
      'x-ratelimit-reset-requests': expect.stringMatching(/^\d+s$/),
    })
  })

  it('a stream whose head a keep-alive committed before the upstream answered carries them', async () => {
    const c = await start({ limits: { owners: { requestsPerMinute: 5 } }, keepAlive: { streamMs: 20 } })
    const claude = DIALECTS.find((d) => d.model === 'claude-haiku-4-5') as (typeof DIALECTS)[0]
    const answer = await call(`${c.url}${claude.path(true)}`, {
      headers: claude.headers(KEY_A),
      body: claude.body({ delay_ms: 300, headers: UPSTREAM_LIMITS }, true),
    })
    expect(answer.status).toBe(200)
    // The keep-alive comment came first: the head went out before the upstream's.
    expect(answer.text.startsWith(': keep-alive')).toBe(true)
    expect(limitHeadersOf(answer.headers)).toMatchObject({
      'anthropic-ratelimit-requests-limit': '5',
      'anthropic-ratelimit-requests-remaining': '4',
    })
    expect(Object.keys(limitHeadersOf(answer.headers)).some((name) => OPENAI_NAMES.test(name))).toBe(false)
  })

  it('without limits: no owner headers, and the upstream’s pass through as before', async () => {
    const c = await start()
    for (const d of DIALECTS) {
      const answer = await call(`${c.url}${d.path(false)}`, {
        headers: d.headers(KEY_A),
        body: d.body({ headers: UPSTREAM_LIMITS }, false),
      })
      expect(answer.status).toBe(200)
      expect(limitHeadersOf(answer.headers)).toEqual(UPSTREAM_LIMITS)
    }
  })

  it('the OpenAI and Anthropic SDKs read them from a 2xx, whole and streamed', async () => {
    const c = await start({ limits: { owners: { requestsPerMinute: 9, tokensPerMinute: 50_000 } } })
    const openai = new OpenAI({ baseURL: `${c.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const claude = new Anthropic({ baseURL: c.url, apiKey: KEY_A, maxRetries: 0 })
    const whole = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] })
      .withResponse()
    expect(whole.response.headers.get('x-ratelimit-remaining-requests')).toBe('8')
    expect(whole.response.headers.get('x-ratelimit-limit-tokens')).toBe('50000')
    const streamed = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'two' }], stream: true })
      .withResponse()
    for await (const _ of streamed.data) {
      // drained
    }
    expect(streamed.response.headers.get('x-ratelimit-remaining-requests')).toBe('7')
    const message = await claude.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'three' }] })
      .withResponse()
    expect(message.response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('6')
    expect(message.response.headers.get('x-ratelimit-remaining-requests')).toBeNull()
    const claudeStream = claude.messages.stream({
      model: 'claude-haiku-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'four' }],
    })
    const { response } = await claudeStream.withResponse()
    await claudeStream.finalMessage()
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('5')
    expect(response.headers.get('anthropic-ratelimit-tokens-limit')).toBe('50000')
  })
})
