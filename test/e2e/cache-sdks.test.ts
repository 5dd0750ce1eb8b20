import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { generateText, streamText } from 'ai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_A } from '../support/fixture.js'
import { type LedgerChain, startLedgerChain } from '../support/ledger.js'

// The real SDKs get the same answer from a hit as from the call that filled the cache, streamed or not, and across
// framings: a stream served from a whole answer, a whole call from a streamed one. Every hit makes no upstream call.
describe('the response cache, through the real SDKs', () => {
  let chain: LedgerChain
  let openai: OpenAI
  let anthropic: Anthropic
  let genai: GoogleGenAI
  beforeAll(async () => {
    chain = await startLedgerChain({ cache: {} })
    openai = new OpenAI({ baseURL: `${chain.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    anthropic = new Anthropic({ baseURL: chain.url, apiKey: KEY_A, maxRetries: 0 })
    genai = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: chain.url, apiVersion: 'v1beta' } })
  })
  afterAll(() => chain.close())

  /** Runs `twice`'s calls and says how many went upstream. */
  async function upstreamCalls(run: () => Promise<void>): Promise<number> {
    const before = chain.mock.requests.length
    await run()
    return chain.mock.requests.length - before
  }

  async function chatStreamText(content: string, model = 'gpt-4o-mini'): Promise<{ text: string; cache: string | null }> {
    const { data, response } = await openai.chat.completions
      .create({ model, messages: [{ role: 'user', content }], stream: true })
      .withResponse()
    let text = ''
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? ''
    return { text, cache: response.headers.get('x-model-gateway-cache') }
  }

  it('OpenAI chat: a whole call twice is one upstream call, the same answer, marked hit with its age', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'cache me whole' }] }
    let first: OpenAI.ChatCompletion | undefined
    let second: OpenAI.ChatCompletion | undefined
    let headers: Headers | undefined
    const calls = await upstreamCalls(async () => {
      const a = await openai.chat.completions.create(body).withResponse()
      expect(a.response.headers.get('x-model-gateway-cache')).toBe('miss')
      first = a.data
      const b = await openai.chat.completions.create(body).withResponse()
      second = b.data
      headers = b.response.headers
    })
    expect(calls).toBe(1)
    expect(second).toEqual(first)
    expect(headers?.get('x-model-gateway-cache')).toBe('hit')
    expect(Number(headers?.get('age'))).toBeGreaterThanOrEqual(0)
  })

  it('OpenAI chat: a stream twice is one upstream call and the same text', async () => {
    let first = { text: '', cache: null as string | null }
    let second = { text: '', cache: null as string | null }
    const calls = await upstreamCalls(async () => {
      first = await chatStreamText('cache me streamed')
      second = await chatStreamText('cache me streamed')
    })
    expect(calls).toBe(1)
    expect(first.cache).toBe('miss')
    expect(second).toEqual({ text: first.text, cache: 'hit' })
    expect(second.text.length).toBeGreaterThan(0)
  })

  it('OpenAI chat: a whole answer serves a stream, and a streamed one a whole call', async () => {
    const calls = await upstreamCalls(async () => {
      const whole = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'whole first' }] })
      const streamed = await chatStreamText('whole first')
      expect(streamed).toEqual({ text: whole.choices[0]?.message.content, cache: 'hit' })

      const stream = await chatStreamText('stream first')
      const again = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream first' }] })
      expect(again.choices[0]?.message.content).toBe(stream.text)
      expect(again.choices[0]?.finish_reason).toBe('stop')
      expect(again.usage?.total_tokens).toBeGreaterThan(0)
    })
    expect(calls).toBe(2)
  })

  it('Anthropic Messages: create then stream, stream then create, each one upstream call', async () => {
    const ask = (text: string) => ({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: text }] })
    const calls = await upstreamCalls(async () => {
      const whole = await anthropic.messages.create(ask('claude whole first'))
      const again = await anthropic.messages.create(ask('claude whole first'))
      expect(again).toEqual(whole)
      const streamed = await anthropic.messages.stream(ask('claude whole first')).finalMessage()
      expect(streamed.content).toEqual(whole.content)
      expect(streamed.stop_reason).toBe(whole.stop_reason)

      const live = await anthropic.messages.stream(ask('claude stream first')).finalMessage()
      const replayed = await anthropic.messages.stream(ask('claude stream first')).finalMessage()
      expect(replayed).toEqual(live)
      const created = await anthropic.messages.create(ask('claude stream first'))
      expect(created.content).toEqual(live.content)
      expect(created.usage.output_tokens).toBe(live.usage.output_tokens)
    })
    expect(calls).toBe(2)
  })

  it('Google GenAI: generateContent then a stream, and a stream then generateContent', async () => {
    const calls = await upstreamCalls(async () => {
      const whole = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'gemini whole first' })
      const again = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'gemini whole first' })
      expect(again.text).toBe(whole.text)
      expect(again.usageMetadata).toEqual(whole.usageMetadata)
      let text = ''
      for await (const chunk of await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'gemini whole first' }))
        text += chunk.text ?? ''
      expect(text).toBe(whole.text)

      let live = ''
      for await (const chunk of await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'gemini stream first' }))
        live += chunk.text ?? ''
      const created = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'gemini stream first' })
      expect(created.text).toBe(live)
    })
    expect(calls).toBe(2)
  })

  it('a translated call (the Anthropic SDK to an OpenAI model) is cached in the client terms, both framings', async () => {
    const ask = { model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user' as const, content: 'translated cache' }] }
    const calls = await upstreamCalls(async () => {
      const whole = await anthropic.messages.create(ask)
      const streamed = await anthropic.messages.stream(ask).finalMessage()
      expect(streamed.content).toEqual(whole.content)
      const again = await anthropic.messages.create(ask)
      expect(again.content).toEqual(whole.content)
    })
    expect(calls).toBe(1)
  })

  it('the ai SDK: generateText twice and streamText after it, one upstream call', async () => {
    const provider = createOpenAI({ baseURL: `${chain.url}/v1`, apiKey: KEY_A })
    const model = provider.chat('gpt-4o-mini')
    const calls = await upstreamCalls(async () => {
      const first = await generateText({ model, prompt: 'ai sdk cache', maxRetries: 0 })
      const second = await generateText({ model, prompt: 'ai sdk cache', maxRetries: 0 })
      expect(second.text).toBe(first.text)
      expect(second.response.headers?.['x-model-gateway-cache']).toBe('hit')
      const streamed = streamText({ model, prompt: 'ai sdk cache', maxRetries: 0 })
      expect(await streamed.text).toBe(first.text)
    })
    expect(calls).toBe(1)
  })
})
