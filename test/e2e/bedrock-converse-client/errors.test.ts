import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_A } from '../../support/fixture.js'
import { type ConverseGateway, converseClient, startConverseGateway } from './gateway.js'

// Errors as a Bedrock client reads them: `x-amzn-errortype` and `{ message }`, raised by the AWS SDK as the
// exception of that name, whether the gateway refused the call, the upstream did (passthrough or translated), or
// a stream broke off.

let gw: ConverseGateway
beforeAll(async () => {
  gw = await startConverseGateway()
})
afterAll(() => gw.close())

const hello = (modelId: string, text = 'hello') => ({ modelId, messages: [{ role: 'user' as const, content: [{ text }] }] })

async function raw(path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, type: res.headers.get('x-amzn-errortype'), body: (await res.json()) as Record<string, unknown> }
}

describe('the gateway’s own refusals, in Bedrock’s shape', () => {
  it('no key (the SDK signing with AWS credentials instead): 401 UnrecognizedClientException', async () => {
    const call = converseClient(gw.url, null).send(new ConverseCommand(hello('nova')))
    await expect(call).rejects.toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 401 } })
    const res = await raw('/model/nova/converse', {}, hello('nova'))
    expect(res).toMatchObject({ status: 401, type: 'UnrecognizedClientException', body: { message: expect.any(String) } })
    expect(Object.keys(res.body)).toEqual(['message'])
  })

  it('a wrong key: 401; the key in x-api-key is read as the bearer token is', async () => {
    await expect(converseClient(gw.url, 'sk-wrong').send(new ConverseCommand(hello('nova')))).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
    })
    const res = await fetch(`${gw.url}/model/nova/converse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A },
      body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'keyed' }] }] }),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { output: unknown }).output).toEqual({
      message: { role: 'assistant', content: [{ text: 'Echo: keyed' }] },
    })
  })

  it('an unknown model: 404 ResourceNotFoundException naming it', async () => {
    const call = converseClient(gw.url).send(new ConverseCommand(hello('us.nobody.nothing-v1:0')))
    await expect(call).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: expect.stringContaining('us.nobody.nothing-v1:0'),
      $metadata: { httpStatusCode: 404 },
    })
  })

  it('a body that is no Converse request: 400 ValidationException naming the field', async () => {
    const res = await raw('/model/nova/converse', { authorization: `Bearer ${KEY_A}` }, { messages: 'hello' })
    expect(res).toMatchObject({ status: 400, type: 'ValidationException', body: { message: expect.stringContaining('messages') } })
    // Translated, a field no other format can take is refused by its path.
    const translated = await raw(
      '/model/gpt/converse',
      { authorization: `Bearer ${KEY_A}` },
      { ...hello('gpt'), modelId: undefined, extra: 1 },
    )
    expect(translated).toMatchObject({ status: 400, type: 'ValidationException', body: { message: expect.stringContaining('extra') } })
  })
})

describe('upstream errors, in Bedrock’s shape', () => {
  it('a Bedrock upstream’s throttling (passthrough): ThrottlingException, 429', async () => {
    gw.mock.steer('throttle passthrough', { status: 429 })
    const call = converseClient(gw.url).send(new ConverseCommand(hello('nova', 'throttle passthrough')))
    await expect(call).rejects.toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 429 } })
  })

  it('an OpenAI upstream’s 429 (translated): ThrottlingException with the upstream’s message', async () => {
    gw.mock.steer('throttle openai', { status: 429, error_body: { error: { message: 'slow down please', type: 'rate_limit' } } })
    const call = converseClient(gw.url).send(new ConverseCommand(hello('gpt', 'throttle openai')))
    await expect(call).rejects.toMatchObject({ name: 'ThrottlingException', message: 'slow down please' })
  })

  it('an Anthropic upstream’s 500 (translated): InternalServerException', async () => {
    gw.mock.steer('fail anthropic', { status: 500 })
    const call = converseClient(gw.url).send(new ConverseCommand(hello('claude', 'fail anthropic')))
    await expect(call).rejects.toMatchObject({ name: 'InternalServerException', $metadata: { httpStatusCode: 500 } })
  })

  it('a stream cut upstream (translated) ends with an exception frame the SDK raises, after the text so far', async () => {
    gw.mock.steer('cut gemini', { destroy_after_frames: 2, chunks: 6 })
    const streamed = await converseClient(gw.url).send(new ConverseStreamCommand(hello('gemini', 'cut gemini')))
    let text = ''
    const consume = async () => {
      for await (const event of streamed.stream ?? []) text += event.contentBlockDelta?.delta?.text ?? ''
    }
    await expect(consume()).rejects.toMatchObject({ name: expect.stringMatching(/^(ModelStreamErrorException|InternalServerException)$/) })
    expect(text.length).toBeGreaterThan(0)
  })

  it('a stream cut upstream (passthrough) ends with an exception frame too', async () => {
    gw.mock.steer('cut nova', { destroy_after_frames: 2, chunks: 6 })
    const streamed = await converseClient(gw.url).send(new ConverseStreamCommand(hello('nova', 'cut nova')))
    const consume = async () => {
      for await (const _ of streamed.stream ?? []) {
        // reading until the exception
      }
    }
    await expect(consume()).rejects.toMatchObject({ name: 'ModelStreamErrorException' })
  })
})
