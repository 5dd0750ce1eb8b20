import { APIError } from '@anthropic-ai/sdk'
import { InvokeModelCommand, InvokeModelWithResponseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { awsClient, type BedrockClientFixture, bedrockSdk, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'
import { KEY_A } from '../../support/fixture.js'
import { call } from '../../support/http.js'

// Bedrock-format clients' errors, every one in Bedrock's shape (`{ message }` and `x-amzn-errortype`): the model list
// answered without a key, a call without one, unknown models and paths, a body naming a model, upstream errors relayed
// from each upstream kind, and an exception frame where a stream breaks off.

let fx: BedrockClientFixture
beforeAll(async () => {
  fx = await startBedrockClientFixture()
})
afterAll(() => fx.close())

const INVOKE = (model: string) => `/model/${model}/invoke`
const messages = (text: string) => ({
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 32,
  messages: [{ role: 'user', content: text }],
})
const bearer = { authorization: `Bearer ${KEY_A}` }

describe('the model list as inference profiles', () => {
  it('GET /inference-profiles?type=SYSTEM_DEFINED without a key: every configured model, in AWS’s shape', async () => {
    const res = await call(`${fx.url}/inference-profiles?type=SYSTEM_DEFINED`)
    expect(res.status).toBe(200)
    const ids = res.json.inferenceProfileSummaries.map((p: { inferenceProfileId: string }) => p.inferenceProfileId)
    expect(ids).toEqual([MODELS.anthropic.id, MODELS.bedrock.id, MODELS.openai.id])
    expect(res.json.inferenceProfileSummaries[0]).toMatchObject({
      inferenceProfileName: MODELS.anthropic.id,
      inferenceProfileArn: expect.stringMatching(/^arn:aws:bedrock:/),
      models: [{ modelArn: expect.stringMatching(/^arn:aws:bedrock:/) }],
      status: 'ACTIVE',
      type: 'SYSTEM_DEFINED',
    })
  })

  it('one profile by id; an unknown one is ResourceNotFoundException', async () => {
    expect((await call(`${fx.url}/inference-profiles/${MODELS.openai.id}`)).json).toMatchObject({ inferenceProfileId: MODELS.openai.id })
    const missing = await call(`${fx.url}/inference-profiles/nope`)
    expect(missing.status).toBe(404)
    expect(missing.headers['x-amzn-errortype']).toBe('ResourceNotFoundException')
    expect(missing.json).toEqual({ message: expect.stringContaining('nope') })
  })
})

describe('the caller’s errors', () => {
  it('no key: 401 UnrecognizedClientException with { message }; the AWS SDK raises it by name', async () => {
    const res = await call(`${fx.url}${INVOKE(MODELS.anthropic.id)}`, { body: messages('no key') })
    expect(res.status).toBe(401)
    expect(res.headers['x-amzn-errortype']).toBe('UnrecognizedClientException')
    expect(res.json).toEqual({ message: expect.stringContaining('Authorization: Bearer') })
    const error = await bedrockSdk(fx.url, null)
      .messages.create({ model: MODELS.anthropic.id, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).status).toBe(401)
    const aws = await awsClient(fx.url, 'sk-wrong')
      .send(new InvokeModelCommand({ modelId: MODELS.anthropic.id, contentType: 'application/json', body: JSON.stringify(messages('x')) }))
      .catch((e: Error) => e)
    expect((aws as Error).name).toBe('UnrecognizedClientException')
  })

  it('the key in x-api-key works as Bearer does', async () => {
    const res = await call(`${fx.url}${INVOKE(MODELS.anthropic.id)}`, { headers: { 'x-api-key': KEY_A }, body: messages('by x-api-key') })
    expect(res.status).toBe(200)
    expect(res.json.content[0].text).toBe('Echo: by x-api-key')
  })

  it('an unknown model: ResourceNotFoundException, raised so by the AWS SDK', async () => {
    const error = await awsClient(fx.url)
      .send(
        new InvokeModelCommand({ modelId: 'anthropic.nope-v1:0', contentType: 'application/json', body: JSON.stringify(messages('x')) }),
      )
      .catch((e: Error & { $metadata?: { httpStatusCode?: number } }) => e)
    expect((error as Error).name).toBe('ResourceNotFoundException')
    expect((error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(404)
  })

  it('a body with model or stream: 400 ValidationException naming it', async () => {
    for (const extra of [{ model: 'claude' }, { stream: true }]) {
      const res = await call(`${fx.url}${INVOKE(MODELS.anthropic.id)}`, { headers: bearer, body: { ...messages('x'), ...extra } })
      expect(res.status).toBe(400)
      expect(res.headers['x-amzn-errortype']).toBe('ValidationException')
      expect(res.json.message).toContain(Object.keys(extra)[0])
    }
  })

  it('a traversal or an encoded slash in the path names no model: 404 in Bedrock’s shape, nothing upstream', async () => {
    const before = fx.mock.requests.length
    for (const path of ['/model/../invoke', `/model/..%2F..%2Fv1%2Fmessages/invoke`, `/model/${MODELS.anthropic.id}%2F..%2Fx/invoke`]) {
      const res = await call({ origin: fx.url, path }, { headers: bearer, body: messages('x') })
      expect(res.status).toBe(404)
      expect(res.headers['x-amzn-errortype']).toBe('ResourceNotFoundException')
      expect(Object.keys(res.json)).toEqual(['message'])
    }
    expect(fx.mock.requests.length).toBe(before)
  })
})

describe.each([
  { kind: 'anthropic', model: MODELS.anthropic },
  { kind: 'bedrock', model: MODELS.bedrock },
  { kind: 'openai', model: MODELS.openai },
])('upstream errors from an $kind upstream', ({ kind, model }) => {
  it('a 429 reaches the AWS SDK as ThrottlingException, the bedrock SDK as a 429', async () => {
    const marker = `throttled ${kind}`
    fx.mock.steer(marker, { status: 429, headers: { 'retry-after': '1' } })
    const res = await call(`${fx.url}${INVOKE(model.id)}`, { headers: bearer, body: messages(marker) })
    expect(res.status).toBe(429)
    expect(res.headers['x-amzn-errortype']).toBe('ThrottlingException')
    expect(Object.keys(res.json)).toEqual(['message'])
    const error = await awsClient(fx.url)
      .send(new InvokeModelCommand({ modelId: model.id, contentType: 'application/json', body: JSON.stringify(messages(marker)) }))
      .catch((e: Error) => e)
    expect((error as Error).name).toBe('ThrottlingException')
    const sdkError = await bedrockSdk(fx.url)
      .messages.create({ model: model.id, max_tokens: 8, messages: [{ role: 'user', content: marker }] })
      .catch((e: unknown) => e)
    expect((sdkError as APIError).status).toBe(429)
    fx.mock.steer(marker, undefined)
  })

  it('a stream broken off upstream ends with an exception frame the AWS SDK raises', async () => {
    const marker = `broken stream ${kind}`
    fx.mock.steer(marker, { chunks: 8, destroy_after_frames: 3 })
    const out = await awsClient(fx.url).send(
      new InvokeModelWithResponseStreamCommand({
        modelId: model.id,
        contentType: 'application/json',
        body: JSON.stringify(messages(marker)),
      }),
    )
    let chunks = 0
    const error = await (async () => {
      for await (const part of out.body ?? []) if (part.chunk) chunks++
    })().catch((e: Error) => e)
    expect(chunks).toBeGreaterThan(0)
    expect((error as Error).name).toBe('ModelStreamErrorException')
    fx.mock.steer(marker, undefined)
  })
})
