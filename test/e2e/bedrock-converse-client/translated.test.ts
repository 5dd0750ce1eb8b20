import { ConverseCommand, ConverseStreamCommand, type ConverseStreamOutput, type Message } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEDROCK_CLAUDE, type ConverseGateway, converseClient, modelCalls, startConverseGateway } from './gateway.js'

// The AWS SDK's Converse on models of other formats: OpenAI, Gemini and Anthropic upstreams, and Claude on Bedrock
// (InvokeModel), each translated through the hub: text, a system prompt, a toolUse round trip, streams, usage.

let gw: ConverseGateway
beforeAll(async () => {
  gw = await startConverseGateway()
})
afterAll(() => gw.close())

const lastCall = () => modelCalls(gw.mock).at(-1)
const toolConfig = {
  tools: [
    {
      toolSpec: {
        name: 'get_weather',
        description: 'The weather in a city',
        inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      },
    },
  ],
}

/** The path each upstream's translated call takes on the mock. */
const UPSTREAM_PATHS: Record<string, RegExp> = {
  gpt: /^\/v1\/chat\/completions$/,
  gemini: /^\/v1beta\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent\?alt=sse)$/,
  claude: /^\/v1\/messages$/,
  'claude-bedrock': new RegExp(`^/model/${encodeURIComponent(BEDROCK_CLAUDE)}/invoke(-with-response-stream)?$`),
}

/** The kind of each event a ConverseStream yielded, in order. */
const kindOf = (event: ConverseStreamOutput) =>
  Object.keys(event).find((key) => (event as unknown as Record<string, unknown>)[key] !== undefined) as string

describe.each(Object.keys(UPSTREAM_PATHS))('a Converse client on %s (translated)', (model) => {
  it('ConverseCommand with a system prompt: the answer in Converse’s shape, every member the SDK requires', async () => {
    const answer = await converseClient(gw.url).send(
      new ConverseCommand({
        modelId: model,
        system: [{ text: 'be brief' }],
        messages: [{ role: 'user', content: [{ text: 'hello there' }] }],
        inferenceConfig: { maxTokens: 100, temperature: 0.5 },
      }),
    )
    expect(answer.output?.message).toEqual({ role: 'assistant', content: [{ text: 'Echo: hello there' }] })
    expect(answer.stopReason).toBe('end_turn')
    expect(answer.usage).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) })
    expect(answer.usage?.totalTokens).toBe((answer.usage?.inputTokens ?? 0) + (answer.usage?.outputTokens ?? 0))
    expect(answer.metrics).toEqual({ latencyMs: 0 })
    const call = lastCall()
    expect(call?.path).toMatch(UPSTREAM_PATHS[model] as RegExp)
    // The system prompt went in the upstream's own terms.
    expect(call?.body).toContain('be brief')
    expect(gw.usage.at(-1)).toMatchObject({ model, endpoint: 'bedrock.converse', output_tokens: answer.usage?.outputTokens })
  })

  it('a toolUse round trip: the tool is called, its toolResult sent back and answered', async () => {
    const client = converseClient(gw.url)
    const question: Message = { role: 'user', content: [{ text: 'weather in Paris?' }] }
    const first = await client.send(new ConverseCommand({ modelId: model, toolConfig, messages: [question] }))
    expect(first.stopReason).toBe('tool_use')
    const use = first.output?.message?.content?.find((block) => block.toolUse)?.toolUse
    if (use === undefined) throw new Error('no toolUse in the answer')
    expect(use).toMatchObject({ name: 'get_weather', toolUseId: expect.any(String), input: { city: expect.any(String) } })
    const second = await client.send(
      new ConverseCommand({
        modelId: model,
        toolConfig,
        messages: [
          question,
          { role: 'assistant', content: [{ toolUse: use }] },
          { role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ text: 'sunny, 21 degrees' }] } }] },
        ],
      }),
    )
    expect(second.stopReason).toBe('end_turn')
    expect(second.output?.message?.content?.[0]?.text).toContain('sunny, 21 degrees')
  })

  it('ConverseStreamCommand: Converse’s events in order as event-stream frames, the usage in `metadata`', async () => {
    const streamed = await converseClient(gw.url).send(
      new ConverseStreamCommand({ modelId: model, messages: [{ role: 'user', content: [{ text: 'stream it' }] }] }),
    )
    const kinds: string[] = []
    let text = ''
    let usage: { inputTokens?: number; outputTokens?: number } | undefined
    for await (const event of streamed.stream ?? []) {
      kinds.push(kindOf(event))
      text += event.contentBlockDelta?.delta?.text ?? ''
      usage ??= event.metadata?.usage
    }
    expect(text).toBe('Echo: stream it')
    expect(kinds[0]).toBe('messageStart')
    expect(kinds.slice(-3)).toEqual(['contentBlockStop', 'messageStop', 'metadata'])
    expect(usage?.outputTokens).toBeGreaterThan(0)
    expect(gw.usage.at(-1)).toMatchObject({ model, endpoint: 'bedrock.converse', output_tokens: usage?.outputTokens })
  })

  it('ConverseStreamCommand with a tool: contentBlockStart names it, its input streams in deltas', async () => {
    const streamed = await converseClient(gw.url).send(
      new ConverseStreamCommand({ modelId: model, toolConfig, messages: [{ role: 'user', content: [{ text: 'weather?' }] }] }),
    )
    let name: string | undefined
    let input = ''
    let stop: string | undefined
    for await (const event of streamed.stream ?? []) {
      name ??= event.contentBlockStart?.start?.toolUse?.name
      input += event.contentBlockDelta?.delta?.toolUse?.input ?? ''
      stop ??= event.messageStop?.stopReason
    }
    expect(name).toBe('get_weather')
    expect(JSON.parse(input)).toMatchObject({ city: expect.any(String) })
    expect(stop).toBe('tool_use')
  })

  it('a body above 1 MiB is translated too', async () => {
    const text = `big ${'y'.repeat(1536 * 1024)}`
    const answer = await converseClient(gw.url).send(
      new ConverseCommand({ modelId: model, messages: [{ role: 'user', content: [{ text }] }] }),
    )
    expect(answer.output?.message?.content?.[0]?.text).toBe(`Echo: ${text}`)
  })
})
