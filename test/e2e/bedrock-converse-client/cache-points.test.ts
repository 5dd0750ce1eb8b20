import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_A } from '../../support/fixture.js'
import { BEDROCK_CLAUDE, type ConverseGateway, modelCalls, NOVA, startConverseGateway } from './gateway.js'

// Prompt-cache breakpoints between Converse and Anthropic's Messages. A Converse passthrough forwards cache points and
// guardrails untouched; toward Anthropic (and Claude on Bedrock's InvokeModel) a `cachePoint` becomes `cache_control`
// on the block before it, and an Anthropic client's `cache_control` a `cachePoint` after its block toward Converse;
// cache read and write tokens come back in each client's usage. Guardrails have no equivalent off Bedrock: dropped
// and named.

let gw: ConverseGateway
beforeAll(async () => {
  gw = await startConverseGateway()
})
afterAll(() => gw.close())

const lastCall = () => modelCalls(gw.mock).at(-1)
const TOOL_SPEC = { toolSpec: { name: 'lookup', description: 'Looks up', inputSchema: { json: { type: 'object', properties: {} } } } }
const CONVERSE_BODY = {
  system: [{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }],
  messages: [
    { role: 'user', content: [{ text: 'A long document.' }, { cachePoint: { type: 'default', ttl: '1h' } }, { text: 'Question?' }] },
  ],
  toolConfig: { tools: [TOOL_SPEC, { cachePoint: { type: 'default' } }], toolChoice: { auto: {} } },
  guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1' },
}

/** A Converse call at the gateway, with its answer's status, dropped header and body. */
async function converse(model: string, body: object) {
  const res = await fetch(`${gw.url}/model/${encodeURIComponent(model)}/converse`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, dropped: res.headers.get('x-model-gateway-dropped'), body: (await res.json()) as Record<string, any> }
}

/** The Messages body Claude got: Anthropic's own, or InvokeModel's. */
const sentMessages = () => JSON.parse(lastCall()?.body ?? '{}')

describe('a Converse client’s cache points and guardrails', () => {
  it('passthrough to a Converse model: forwarded untouched, nothing named as dropped', async () => {
    const answer = await converse('nova', CONVERSE_BODY)
    expect(answer.status).toBe(200)
    expect(answer.dropped).toBeNull()
    expect(lastCall()?.path).toBe(`/model/${encodeURIComponent(NOVA)}/converse`)
    expect(JSON.parse(lastCall()?.body ?? '{}')).toEqual(CONVERSE_BODY)
  })

  for (const [model, path] of [
    ['claude', '/v1/messages'],
    ['claude-bedrock', `/model/${encodeURIComponent(BEDROCK_CLAUDE)}/invoke`],
  ] as const) {
    it(`toward ${model}: each cachePoint is cache_control on the block before it; the guardrail is dropped and named`, async () => {
      const answer = await converse(model, CONVERSE_BODY)
      expect(answer.status).toBe(200)
      expect(answer.dropped).toBe('guardrailConfig')
      expect(lastCall()?.path).toBe(path)
      const sent = sentMessages()
      expect(sent.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }])
      expect(sent.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'Question?' },
          ],
        },
      ])
      expect(sent.tools).toEqual([
        { name: 'lookup', description: 'Looks up', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } },
      ])
      expect(JSON.stringify(sent)).not.toContain('guardrail')
    })
  }

  it('a cache point with nothing before it in its message caches nothing: dropped and named', async () => {
    const answer = await converse('claude', {
      messages: [{ role: 'user', content: [{ cachePoint: { type: 'default' } }, { text: 'hi' }] }],
    })
    expect(answer.dropped).toBe('messages[0].content[0]')
    expect(sentMessages().messages).toEqual([{ role: 'user', content: 'hi' }])
  })

  it('Anthropic’s cache read and write tokens come back as cacheReadInputTokens and cacheWriteInputTokens', async () => {
    // The usage Anthropic reports for a prompt with this text.
    gw.mock.steer('cached for converse', { usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 } })
    const answer = await converse('claude', {
      messages: [{ role: 'user', content: [{ text: 'cached for converse' }, { cachePoint: { type: 'default' } }] }],
    }).finally(() => gw.mock.steer('cached for converse', undefined))
    expect(answer.body.usage).toMatchObject({ inputTokens: 5, cacheReadInputTokens: 100, cacheWriteInputTokens: 20 })
  })
})

describe('an Anthropic client’s cache_control toward a Converse model', () => {
  const sdk = () => new Anthropic({ baseURL: gw.url, apiKey: KEY_A, maxRetries: 0 })

  it('each cache_control is a cachePoint after its block (system, message, tool), nothing named as dropped', async () => {
    const ok = await sdk()
      .messages.create({
        model: 'nova',
        max_tokens: 64,
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '1h' } },
              { type: 'text', text: 'Question?' },
            ],
          },
        ],
        tools: [
          {
            name: 'lookup',
            description: 'Looks up',
            input_schema: { type: 'object', properties: {} },
            cache_control: { type: 'ephemeral' },
          },
        ],
      })
      .withResponse()
    expect(ok.response.headers.get('x-model-gateway-dropped')).toBeNull()
    const sent = JSON.parse(lastCall()?.body ?? '{}')
    expect(sent.system).toEqual([{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }])
    expect(sent.messages[0].content).toEqual([
      { text: 'A long document.' },
      { cachePoint: { type: 'default', ttl: '1h' } },
      { text: 'Question?' },
    ])
    expect(sent.toolConfig.tools).toEqual([
      { toolSpec: { name: 'lookup', description: 'Looks up', inputSchema: { json: { type: 'object', properties: {} } } } },
      { cachePoint: { type: 'default' } },
    ])
  })

  it('Converse’s cacheReadInputTokens and cacheWriteInputTokens come back as Anthropic’s cache tokens', async () => {
    // The usage Bedrock reports for a prompt with this text.
    gw.mock.steer('cached for anthropic', { usage: { inputTokens: 5, cacheReadInputTokens: 100, cacheWriteInputTokens: 20 } })
    const message = await sdk()
      .messages.create({ model: 'nova', max_tokens: 64, messages: [{ role: 'user', content: 'cached for anthropic' }] })
      .finally(() => gw.mock.steer('cached for anthropic', undefined))
    expect(message.usage).toMatchObject({ input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 })
  })
})
