import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConverseGateway, converseClient, modelCalls, NOVA, startConverseGateway } from './gateway.js'

// The AWS SDK's Converse and ConverseStream at the gateway, on a Bedrock model that takes Converse: passthrough, the
// body as the client sent it, signed with SigV4 by the gateway (the mock checks the signature), the model in the path.

let gw: ConverseGateway
beforeAll(async () => {
  gw = await startConverseGateway()
})
afterAll(() => gw.close())

const lastCall = () => modelCalls(gw.mock).at(-1)

describe('a Converse client on a Bedrock Converse upstream (passthrough)', () => {
  it('ConverseCommand: the body as sent, signed, at the upstream model’s path; the answer as Bedrock gave it', async () => {
    const answer = await converseClient(gw.url).send(
      new ConverseCommand({
        modelId: 'nova',
        system: [{ text: 'be brief' }],
        messages: [{ role: 'user', content: [{ text: 'hi nova' }] }],
        inferenceConfig: { maxTokens: 64 },
      }),
    )
    expect(answer.output?.message?.content).toEqual([{ text: 'Echo: hi nova' }])
    expect(answer.stopReason).toBe('end_turn')
    expect(answer.usage?.inputTokens).toBeGreaterThan(0)
    expect(answer.metrics?.latencyMs).toBeGreaterThanOrEqual(0)
    expect(answer.$metadata.requestId).toMatch(/./)
    const call = lastCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(NOVA)}/converse`)
    expect(call?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAMOCKGATEWAY00001\//)
    const body = JSON.parse(call?.body ?? '{}')
    expect(body).toEqual({
      system: [{ text: 'be brief' }],
      messages: [{ role: 'user', content: [{ text: 'hi nova' }] }],
      inferenceConfig: { maxTokens: 64 },
    })
    const usage = gw.usage.at(-1)
    expect(usage).toMatchObject({ model: 'nova', endpoint: 'bedrock.converse', input_tokens: answer.usage?.inputTokens })
  })

  it('the Bedrock model id as the SDK sends it (an alias, with `.` and `:`), percent-encoded in the path', async () => {
    const answer = await converseClient(gw.url).send(
      new ConverseCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'by id' }] }] }),
    )
    expect(answer.output?.message?.content).toEqual([{ text: 'Echo: by id' }])
  })

  it('ConverseStreamCommand: Bedrock’s events as event-stream frames, each as the SDK yields it, usage metered', async () => {
    const streamed = await converseClient(gw.url).send(
      new ConverseStreamCommand({ modelId: 'nova', messages: [{ role: 'user', content: [{ text: 'stream nova' }] }] }),
    )
    const kinds: string[] = []
    let text = ''
    let stop: string | undefined
    let outputTokens: number | undefined
    for await (const event of streamed.stream ?? []) {
      kinds.push(Object.keys(event).filter((key) => (event as unknown as Record<string, unknown>)[key] !== undefined)[0] as string)
      text += event.contentBlockDelta?.delta?.text ?? ''
      stop ??= event.messageStop?.stopReason
      outputTokens ??= event.metadata?.usage?.outputTokens
    }
    expect(text).toBe('Echo: stream nova')
    expect(stop).toBe('end_turn')
    expect(kinds[0]).toBe('messageStart')
    expect(kinds.slice(-2)).toEqual(['messageStop', 'metadata'])
    expect(lastCall()?.path).toBe(`/model/${encodeURIComponent(NOVA)}/converse-stream`)
    expect(gw.usage.at(-1)).toMatchObject({ model: 'nova', endpoint: 'bedrock.converse', output_tokens: outputTokens })
  })

  it('a tool round trip: toolUse answered, the toolResult sent back', async () => {
    const client = converseClient(gw.url)
    const toolConfig = {
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          },
        },
      ],
    }
    const first = await client.send(
      new ConverseCommand({ modelId: 'nova', toolConfig, messages: [{ role: 'user', content: [{ text: 'weather?' }] }] }),
    )
    expect(first.stopReason).toBe('tool_use')
    const use = first.output?.message?.content?.[0]?.toolUse
    if (use === undefined) throw new Error('no toolUse in the answer')
    expect(use).toMatchObject({ name: 'get_weather', input: { city: expect.any(String) } })
    const second = await client.send(
      new ConverseCommand({
        modelId: 'nova',
        toolConfig,
        messages: [
          { role: 'user', content: [{ text: 'weather?' }] },
          { role: 'assistant', content: [{ toolUse: use }] },
          { role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ text: 'sunny' }] } }] },
        ],
      }),
    )
    expect(second.output?.message?.content?.[0]?.text).toContain('sunny')
  })

  it('a stream exception upstream reaches the SDK as the exception of its type', async () => {
    gw.mock.steer('throttle me', { stream_exception: 'throttlingException' })
    const streamed = await converseClient(gw.url).send(
      new ConverseStreamCommand({ modelId: 'nova', messages: [{ role: 'user', content: [{ text: 'throttle me' }] }] }),
    )
    const consume = async () => {
      for await (const _ of streamed.stream ?? []) {
        // reading until the exception
      }
    }
    await expect(consume()).rejects.toMatchObject({ name: 'ThrottlingException' })
  })

  it('a body above 1 MiB (read scanned, not parsed whole, on its way through): passthrough as sent', async () => {
    const text = `big ${'x'.repeat(2 * 1024 * 1024)}`
    const answer = await converseClient(gw.url).send(
      new ConverseCommand({ modelId: 'nova', messages: [{ role: 'user', content: [{ text }] }] }),
    )
    expect(answer.output?.message?.content?.[0]?.text).toBe(`Echo: ${text}`)
    expect(JSON.parse(lastCall()?.body ?? '{}').messages[0].content[0].text).toBe(text)
  })
})
