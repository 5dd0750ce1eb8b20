import Anthropic from '@anthropic-ai/sdk'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_A } from '../support/fixture.js'
import { freshMinute, type LedgerChain, startLedgerChain } from '../support/ledger.js'

// Each SDK reads the gateway's 429 as its own rate-limit error, whole calls and streams alike, with the headers.
describe('a limit reached, through the real SDKs', () => {
  let chain: LedgerChain
  beforeAll(async () => {
    await freshMinute()
    chain = await startLedgerChain({ limits: { owners: { requestsPerMinute: 3 } } })
  })
  afterAll(() => chain.close())

  it('OpenAI, Anthropic and Google GenAI: three calls go, then each SDK raises its rate-limit error', async () => {
    const openai = new OpenAI({ baseURL: `${chain.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const anthropic = new Anthropic({ baseURL: chain.url, apiKey: KEY_A, maxRetries: 0 })
    const genai = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: chain.url, apiVersion: 'v1beta' } })
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] })
    await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'two' }] })
    await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'three' })

    const chat = openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true })
    const openaiError = await chat.then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(openaiError).toBeInstanceOf(OpenAI.RateLimitError)
    const limited = openaiError as InstanceType<typeof OpenAI.RateLimitError>
    expect(limited.code).toBe('rate_limit_exceeded')
    expect(limited.headers?.get('x-ratelimit-limit-requests')).toBe('3')
    expect(limited.headers?.get('x-ratelimit-remaining-requests')).toBe('0')

    const claudeError = await anthropic.messages
      .stream({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })
      .finalMessage()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(claudeError).toBeInstanceOf(Anthropic.RateLimitError)
    const claude = claudeError as InstanceType<typeof Anthropic.RateLimitError>
    expect(claude.headers?.get('anthropic-ratelimit-requests-remaining')).toBe('0')
    expect(Number(claude.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1)

    const geminiError = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(geminiError).toBeInstanceOf(ApiError)
    expect((geminiError as ApiError).status).toBe(429)
    expect(chain.mock.requests).toHaveLength(3)
  })
})
