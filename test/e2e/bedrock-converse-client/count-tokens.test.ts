import Anthropic from '@anthropic-ai/sdk'
import { CountTokensCommand, ValidationException } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_A } from '../../support/fixture.js'
import { BEDROCK_CLAUDE, type ConverseGateway, converseClient, modelCalls, NOVA, startConverseGateway } from './gateway.js'

// Bedrock's CountTokens, both ways. Upstream: an Anthropic client's count (and a Vertex client's) on Claude on Bedrock
// goes to `/model/{id}/count-tokens` in its InvokeModel form, signed (the mock checks the signature and counts), and
// on a Converse model in its Converse form. Client side: the AWS SDK's CountTokensCommand at the gateway, passthrough
// to a Converse model, translated to every other upstream's own counting method.

let gw: ConverseGateway
beforeAll(async () => {
  gw = await startConverseGateway()
})
afterAll(() => gw.close())

const lastCall = () => modelCalls(gw.mock).at(-1)
const anthropicSdk = () => new Anthropic({ baseURL: gw.url, apiKey: KEY_A, maxRetries: 0 })
const PROMPT = {
  system: 'Answer in one word.',
  messages: [{ role: 'user' as const, content: 'How many tokens does this sentence take?' }],
}
/** The body `input.invokeModel.body` carries, decoded. */
const invokeBodyOf = (text: string | undefined) =>
  JSON.parse(Buffer.from(JSON.parse(text ?? '{}').input.invokeModel.body, 'base64').toString('utf8'))

describe('a token count of an Anthropic client on a Bedrock upstream', () => {
  it('Claude on Bedrock: CountTokens in its InvokeModel form, signed; the same count the Anthropic API gives', async () => {
    const sdk = anthropicSdk()
    const direct = await sdk.messages.countTokens({ model: 'claude', ...PROMPT })
    const counted = await sdk.messages.countTokens({ model: 'claude-bedrock', ...PROMPT })
    expect(counted).toEqual({ input_tokens: direct.input_tokens })
    expect(counted.input_tokens).toBeGreaterThan(0)
    const call = lastCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(BEDROCK_CLAUDE)}/count-tokens`)
    expect(call?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAMOCKGATEWAY00001\//)
    const invoke = invokeBodyOf(call?.body)
    expect(invoke).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', ...PROMPT })
    expect(invoke).not.toHaveProperty('model')
    expect(invoke.max_tokens).toBeGreaterThan(0)
    expect(gw.usage.at(-1)).toMatchObject({ model: 'claude-bedrock', endpoint: 'messages.countTokens' })
  })

  it('the client betas go into the counted body as anthropic_beta', async () => {
    await anthropicSdk().messages.countTokens(
      { model: 'claude-bedrock', ...PROMPT },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    )
    expect(invokeBodyOf(lastCall()?.body).anthropic_beta).toEqual(['context-1m-2025-08-07'])
  })

  it('a Converse model: CountTokens in its Converse form, answered as Anthropic counts', async () => {
    const counted = await anthropicSdk().messages.countTokens({ model: 'nova', ...PROMPT })
    expect(counted.input_tokens).toBeGreaterThan(0)
    const call = lastCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(NOVA)}/count-tokens`)
    expect(JSON.parse(call?.body ?? '{}')).toEqual({
      input: {
        converse: {
          system: [{ text: PROMPT.system }],
          messages: [{ role: 'user', content: [{ text: PROMPT.messages[0]?.content }] }],
        },
      },
    })
  })

  it("a Vertex client's count-tokens:rawPredict on Claude on Bedrock: the same CountTokens call", async () => {
    const res = await fetch(`${gw.url}/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'vertex-2023-10-16', model: 'claude-bedrock', ...PROMPT }),
    })
    const direct = await anthropicSdk().messages.countTokens({ model: 'claude', ...PROMPT })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ input_tokens: direct.input_tokens })
    const call = modelCalls(gw.mock)
      .filter((r) => r.path.endsWith('/count-tokens'))
      .at(-1)
    expect(invokeBodyOf(call?.body)).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', ...PROMPT })
  })

  it("Bedrock's refusal of a count comes back as Anthropic's error", async () => {
    const refused = anthropicSdk().messages.countTokens({
      model: 'claude-bedrock',
      messages: [{ role: 'user', content: 'x' }],
      // The mock's control, inside the counted body: a throttled count.
      ...({ mock: { status: 429 } } as object),
    })
    await expect(refused).rejects.toMatchObject({ status: 429, error: { type: 'error', error: { type: 'rate_limit_error' } } })
  })
})

describe("the AWS SDK's CountTokensCommand at the gateway", () => {
  const invokeBody = (body: object) => new TextEncoder().encode(JSON.stringify(body))
  const claudeBody = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, ...PROMPT }
  const converseInput = {
    system: [{ text: PROMPT.system }],
    messages: [{ role: 'user' as const, content: [{ text: PROMPT.messages[0]?.content as string }] }],
  }

  it('a Converse model: passthrough, the body as the SDK sent it, signed; the answer as Bedrock gave it', async () => {
    const answer = await converseClient(gw.url).send(new CountTokensCommand({ modelId: 'nova', input: { converse: converseInput } }))
    expect(answer.inputTokens).toBeGreaterThan(0)
    const call = lastCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(NOVA)}/count-tokens`)
    expect(call?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /)
    expect(JSON.parse(call?.body ?? '{}')).toEqual({ input: { converse: converseInput } })
    expect(gw.usage.at(-1)).toMatchObject({ model: 'nova', endpoint: 'bedrock.countTokens' })
  })

  it('Claude on Bedrock, in the InvokeModel form: CountTokens upstream, the same count as the Anthropic API', async () => {
    const direct = await anthropicSdk().messages.countTokens({ model: 'claude', ...PROMPT })
    const answer = await converseClient(gw.url).send(
      new CountTokensCommand({ modelId: 'claude-bedrock', input: { invokeModel: { body: invokeBody(claudeBody) } } }),
    )
    expect(answer.inputTokens).toBe(direct.input_tokens)
    const call = lastCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(BEDROCK_CLAUDE)}/count-tokens`)
    expect(invokeBodyOf(call?.body)).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', ...PROMPT })
  })

  it('an Anthropic upstream: translated to /v1/messages/count_tokens, from either form', async () => {
    const direct = await anthropicSdk().messages.countTokens({ model: 'claude', ...PROMPT })
    for (const input of [{ invokeModel: { body: invokeBody(claudeBody) } }, { converse: converseInput }]) {
      const answer = await converseClient(gw.url).send(new CountTokensCommand({ modelId: 'claude', input }))
      expect(answer.inputTokens).toBe(direct.input_tokens)
      const call = lastCall()
      expect(call?.path).toBe('/v1/messages/count_tokens')
      expect(JSON.parse(call?.body ?? '{}')).toEqual({ model: 'claude-sonnet-4-5', ...PROMPT })
    }
  })

  it('OpenAI and Gemini upstreams: their own counting methods', async () => {
    const gpt = await converseClient(gw.url).send(new CountTokensCommand({ modelId: 'gpt', input: { converse: converseInput } }))
    expect(gpt.inputTokens).toBeGreaterThan(0)
    expect(lastCall()?.path).toBe('/v1/responses/input_tokens')
    const gemini = await converseClient(gw.url).send(new CountTokensCommand({ modelId: 'gemini', input: { converse: converseInput } }))
    expect(gemini.inputTokens).toBeGreaterThan(0)
    expect(lastCall()?.path).toMatch(/:countTokens$/)
  })

  it('a body of neither form is the SDK’s ValidationException, and nothing goes upstream', async () => {
    const before = modelCalls(gw.mock).length
    const refused = converseClient(gw.url).send(
      new CountTokensCommand({ modelId: 'claude-bedrock', input: { invokeModel: { body: new TextEncoder().encode('not json') } } }),
    )
    await expect(refused).rejects.toBeInstanceOf(ValidationException)
    expect(modelCalls(gw.mock).length).toBe(before)
  })
})
