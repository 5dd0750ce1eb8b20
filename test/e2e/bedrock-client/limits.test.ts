import { InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { awsClient, type BedrockClientFixture, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'
import { KEY_A } from '../../support/fixture.js'
import { call } from '../../support/http.js'

// Limits, cost and CORS on InvokeModel routes: a call past the owner's limit is Bedrock's ThrottlingException, a
// call's usage event carries its cost from `pricing`, and a browser's preflight allows the AWS SDK's headers.

const APP = 'https://app.example'
let fx: BedrockClientFixture
beforeAll(async () => {
  fx = await startBedrockClientFixture({
    limits: { owners: { requestsPerMinute: 2 } },
    pricing: { 'claude-anthropic': { input: 3, output: 15 } },
    cors: { origins: [APP] },
  })
})
afterAll(() => fx.close())

const body = (text: string) =>
  JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 32, messages: [{ role: 'user', content: text }] })

describe('limits, cost and CORS on InvokeModel', () => {
  it('the call past the limit is ThrottlingException with retry-after, and goes nowhere; the others carry their cost', async () => {
    const send = () =>
      awsClient(fx.url).send(
        new InvokeModelCommand({ modelId: MODELS.anthropic.id, contentType: 'application/json', body: body('limited') }),
      )
    await send()
    await send()
    const before = fx.mock.requests.length
    const error = await send().catch((e: Error & { $response?: { headers: Record<string, string> } }) => e)
    expect((error as Error).name).toBe('ThrottlingException')
    expect((error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(429)
    expect(fx.mock.requests.length).toBe(before)
    const priced = fx.usage.filter((u) => u.endpoint === 'bedrock.invoke')
    expect(priced).toHaveLength(2)
    expect(priced[0]?.cost).toBeGreaterThan(0)
  })

  it('a preflight allows the AWS SDK’s headers; the list and an error answer carry the origin', async () => {
    const preflight = await call(`${fx.url}/model/${MODELS.anthropic.id}/invoke`, {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, amz-sdk-invocation-id, amz-sdk-request, x-amz-user-agent, content-type',
      },
    })
    expect(preflight.status).toBe(204)
    const allowed = String(preflight.headers['access-control-allow-headers']).split(/,\s*/)
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'amz-sdk-invocation-id', 'amz-sdk-request', 'x-amz-user-agent']))
    const profiles = await call(`${fx.url}/inference-profiles`, { headers: { origin: APP } })
    expect(profiles.headers['access-control-allow-origin']).toBe(APP)
    const res = await call(`${fx.url}/model/${MODELS.openai.id}/invoke`, {
      headers: { origin: APP, authorization: `Bearer ${KEY_A}` },
      body: JSON.parse(body('cors')),
    })
    // The owner is past its limit by now: an error answer carries CORS's headers too.
    expect(res.status).toBe(429)
    expect(res.headers['x-amzn-errortype']).toBe('ThrottlingException')
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(String(res.headers['access-control-expose-headers'])).toContain('x-amzn-requestid')
  })
})
