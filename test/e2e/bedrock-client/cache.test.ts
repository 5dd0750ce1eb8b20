import { InvokeModelCommand, InvokeModelWithResponseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { awsClient, type BedrockClientFixture, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'

// The response cache serves InvokeModel calls: a repeat is a hit in its own framing (JSON, or event-stream frames the
// AWS SDK reads), whichever of the two paths filled it, with no upstream call.

let fx: BedrockClientFixture
beforeAll(async () => {
  fx = await startBedrockClientFixture({ cache: { ttlMs: 60_000 } })
})
afterAll(() => fx.close())

const decoder = new TextDecoder()
const body = (text: string) =>
  JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 32, messages: [{ role: 'user', content: text }] })
const upstreamCalls = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker)).length

async function streamedText(marker: string): Promise<string> {
  const out = await awsClient(fx.url).send(
    new InvokeModelWithResponseStreamCommand({ modelId: MODELS.anthropic.id, contentType: 'application/json', body: body(marker) }),
  )
  let text = ''
  for await (const part of out.body ?? []) text += JSON.parse(decoder.decode(part.chunk?.bytes)).delta?.text ?? ''
  return text
}

describe.each([MODELS.anthropic, MODELS.openai])('the response cache on InvokeModel ($id)', (model) => {
  it('a repeated InvokeModel is a hit: the same message, one upstream call', async () => {
    const marker = `cached whole ${model.id}`
    const send = () =>
      awsClient(fx.url).send(new InvokeModelCommand({ modelId: model.id, contentType: 'application/json', body: body(marker) }))
    const first = JSON.parse(decoder.decode((await send()).body))
    const second = JSON.parse(decoder.decode((await send()).body))
    expect(second).toEqual(first)
    expect(upstreamCalls(marker)).toBe(1)
  })
})

describe('the response cache across framings', () => {
  it('a stream repeated is a hit framed as event-stream chunks; the whole call of the same body is a hit too', async () => {
    const marker = 'cached stream'
    expect(await streamedText(marker)).toBe(`Echo: ${marker}`)
    expect(await streamedText(marker)).toBe(`Echo: ${marker}`)
    const whole = await awsClient(fx.url).send(
      new InvokeModelCommand({ modelId: MODELS.anthropic.id, contentType: 'application/json', body: body(marker) }),
    )
    expect(JSON.parse(decoder.decode(whole.body)).content[0].text).toBe(`Echo: ${marker}`)
    expect(upstreamCalls(marker)).toBe(1)
  })
})
