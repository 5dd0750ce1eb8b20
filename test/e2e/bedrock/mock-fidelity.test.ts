import AnthropicBedrock from '@anthropic-ai/bedrock-sdk'
import {
  BedrockRuntimeClient,
  CountTokensCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  type ResponseStream,
} from '@aws-sdk/client-bedrock-runtime'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MOCK_AWS_CREDENTIALS, type MockUpstream, startMockUpstream } from '../../../src/testing/index.js'

// The official AWS and Anthropic clients against the mock's Bedrock routes directly: they succeed, so the mock speaks
// Bedrock (SigV4 as AWS checks it, event streams with correct CRCs, Bedrock's errors) and not the gateway's idea of it.

const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
let mock: MockUpstream
beforeAll(async () => {
  mock = await startMockUpstream()
})
afterAll(() => mock.close())

const aws = (credentials = MOCK_AWS_CREDENTIALS) =>
  // HTTP/1.1: the SDK's default HTTP/2 handler is for bidirectional streams, which the mock does not serve.
  new BedrockRuntimeClient({ region: 'us-east-1', endpoint: mock.url, credentials, maxAttempts: 1, requestHandler: new NodeHttpHandler() })
const invokeBody = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 256, messages: [{ role: 'user', content: text }], ...extra })

async function chunks(body: AsyncIterable<ResponseStream> | undefined): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = []
  for await (const event of body ?? []) {
    if (event.chunk?.bytes) out.push(JSON.parse(Buffer.from(event.chunk.bytes).toString('utf8')))
  }
  return out
}

describe('@aws-sdk/client-bedrock-runtime against the mock', () => {
  it('InvokeModel: a Claude message, the path the SDK encodes and signs', async () => {
    const answer = await aws().send(new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: invokeBody('hello') }))
    const message = JSON.parse(Buffer.from(answer.body).toString('utf8'))
    expect(message).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Echo: hello' }] })
    expect(mock.requests.at(-1)?.path).toBe(`/model/${encodeURIComponent(MODEL)}/invoke`)
  })

  it('CountTokens in both forms: signed, the model in the path, `inputTokens` back; a body InvokeModel refuses is refused', async () => {
    const invoked = await aws().send(
      new CountTokensCommand({ modelId: MODEL, input: { invokeModel: { body: new TextEncoder().encode(invokeBody('count me')) } } }),
    )
    expect(invoked.inputTokens).toBeGreaterThan(0)
    expect(mock.requests.at(-1)?.path).toBe(`/model/${encodeURIComponent(MODEL)}/count-tokens`)
    const conversed = await aws().send(
      new CountTokensCommand({
        modelId: 'us.amazon.nova-pro-v1:0',
        input: { converse: { messages: [{ role: 'user', content: [{ text: 'count me' }] }] } },
      }),
    )
    expect(conversed.inputTokens).toBe(invoked.inputTokens)
    const noLimit = new TextEncoder().encode(JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', messages: [] }))
    await expect(aws().send(new CountTokensCommand({ modelId: MODEL, input: { invokeModel: { body: noLimit } } }))).rejects.toMatchObject({
      name: 'ValidationException',
    })
  })

  it('InvokeModelWithResponseStream: every Anthropic event, framed and checked by the SDK', async () => {
    const answer = await aws().send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body: invokeBody('stream me') }))
    const events = await chunks(answer.body)
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['message_start', 'content_block_delta', 'message_delta', 'message_stop']),
    )
    const text = events.flatMap((e) => (e.type === 'content_block_delta' ? [(e.delta as { text: string }).text] : [])).join('')
    expect(text).toBe('Echo: stream me')
  })

  it('a stream exception reaches the SDK as Bedrock’s typed error', async () => {
    const answer = await aws().send(
      new InvokeModelWithResponseStreamCommand({
        modelId: MODEL,
        body: invokeBody('x', { mock: { stream_exception: 'throttlingException' } }),
      }),
    )
    await expect(chunks(answer.body)).rejects.toMatchObject({ name: 'ThrottlingException' })
  })

  it('a wrong secret: 403 InvalidSignatureException; an unknown key id: UnrecognizedClientException', async () => {
    const wrongSecret = aws({ ...MOCK_AWS_CREDENTIALS, secretAccessKey: 'not-the-secret' })
    await expect(wrongSecret.send(new InvokeModelCommand({ modelId: MODEL, body: invokeBody('x') }))).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      $metadata: { httpStatusCode: 403 },
    })
    const unknown = aws({ accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: 's' })
    await expect(unknown.send(new InvokeModelCommand({ modelId: MODEL, body: invokeBody('x') }))).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
    })
  })

  it('Bedrock’s errors by type: throttling 429, validation 400', async () => {
    await expect(
      aws().send(new InvokeModelCommand({ modelId: MODEL, body: invokeBody('x', { mock: { status: 429 } }) })),
    ).rejects.toMatchObject({
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 429 },
    })
    await expect(
      aws().send(new InvokeModelCommand({ modelId: MODEL, body: JSON.stringify({ model: 'x', max_tokens: 1, messages: [] }) })),
    ).rejects.toMatchObject({
      name: 'ValidationException',
    })
  })
})

describe('@anthropic-ai/bedrock-sdk against the mock', () => {
  const client = () =>
    new AnthropicBedrock({
      baseURL: mock.url,
      awsRegion: 'us-east-1',
      awsAccessKey: MOCK_AWS_CREDENTIALS.accessKeyId,
      awsSecretKey: MOCK_AWS_CREDENTIALS.secretAccessKey,
      maxRetries: 0,
    })

  it('messages.create', async () => {
    const message = await client().messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: hi' }])
  })

  it('messages.stream with a beta: the text, and the beta in the body as anthropic_beta', async () => {
    const stream = client().messages.stream(
      { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'streamed' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    )
    expect(await stream.finalText()).toBe('Echo: streamed')
    expect(JSON.parse(mock.requests.at(-1)?.body ?? '{}').anthropic_beta).toEqual(['context-1m-2025-08-07'])
  })
})
