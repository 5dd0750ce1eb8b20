import { describe, expect, it } from 'vitest'
import { streamExceptionType } from '../../src/dialects/bedrock/client-errors.js'
import { converseRequestToHub } from '../../src/dialects/bedrock/converse-client/request.js'
import { converseResponseFromHub } from '../../src/dialects/bedrock/converse-client/response.js'
import { ConverseStreamEncoder, converseFrame } from '../../src/dialects/bedrock/converse-client/stream.js'
import type { CallPlan, SseOut } from '../../src/translate/format.js'
import { Refusal } from '../../src/translate/readers.js'

const PLAN: CallPlan = { model: 'm', upstreamModel: 'm', stream: true, includeUsage: true, requestId: 'r1', created: 1, request: {} }

describe('a Converse request read into the hub', () => {
  it('reads every member, names the hints it leaves out, and finds a tool result’s name by its call', () => {
    const hub = converseRequestToHub({
      system: [{ text: 'be brief' }, { cachePoint: { type: 'default' } }],
      messages: [
        { role: 'user', content: [{ text: 'weather?' }, { image: { format: 'png', source: { bytes: 'iVBO' } } }] },
        {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'thinking', signature: 'sig' } } },
            { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
          ],
        },
        { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ json: { temp: 21 } }], status: 'error' } }] },
      ],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['###'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }, { cachePoint: { type: 'default' } }],
        toolChoice: { tool: { name: 'get_weather' } },
      },
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2048 }, top_k: 40, reasoning_config: {} },
      requestMetadata: { team: 'a' },
    })
    expect(hub.system).toEqual(['be brief'])
    expect(hub.messages[0]?.parts[1]).toEqual({
      type: 'media',
      media: { kind: 'inline', mimeType: 'image/png', data: 'iVBO' },
      filename: undefined,
    })
    expect(hub.messages[1]?.parts).toEqual([
      { type: 'reasoning', text: 'thinking', signature: 'sig', redacted: false },
      { type: 'tool_call', id: 't1', name: 'get_weather', args: { city: 'Paris' }, signature: undefined },
    ])
    expect(hub.messages[2]?.parts).toEqual([
      { type: 'tool_result', id: 't1', name: 'get_weather', output: { kind: 'json', value: { temp: 21 } }, error: true },
    ])
    expect(hub).toMatchObject({ maxOutputTokens: 100, temperature: 0.2, topP: 0.9, stop: ['###'], topK: 40 })
    expect(hub.reasoning).toEqual({ budget: 2048 })
    expect(hub.toolChoice).toEqual({ mode: 'required', only: ['get_weather'] })
    expect(hub.tools).toEqual([{ name: 'get_weather', description: undefined, parameters: { type: 'object' } }])
    expect(hub.dropped.sort()).toEqual(
      ['additionalModelRequestFields.reasoning_config', 'requestMetadata', 'system[1]', 'toolConfig.tools[1]'].sort(),
    )
    expect(hub.fields).toMatchObject({ toolChoice: 'toolConfig.toolChoice', stop: 'inferenceConfig.stopSequences' })
  })

  it('refuses, by path, a member it cannot translate', () => {
    const refused = (body: Record<string, unknown>) => {
      try {
        converseRequestToHub(body)
      } catch (error) {
        if (error instanceof Refusal) return error.field
        throw error
      }
      return undefined
    }
    expect(refused({ messages: [], model: 'x' })).toBe('model')
    expect(refused({ messages: [{ role: 'user', content: [{ video: {} }] }] })).toBe('messages[0].content[0]')
    expect(refused({ messages: [{ role: 'system', content: [] }] })).toBe('messages[0].role')
    expect(refused({ messages: [], inferenceConfig: { seed: 1 } })).toBe('inferenceConfig.seed')
  })
})

describe('hub answers written as Converse’s', () => {
  it('a whole answer: blocks, the stop reason in Converse’s words, usage with the cache counts apart', () => {
    const answer = converseResponseFromHub(
      {
        id: undefined,
        model: undefined,
        created: undefined,
        choices: [
          {
            index: 0,
            parts: [
              { type: 'text', text: 'hi' },
              { type: 'tool_call', id: 'c1', name: 'f', args: { a: 1 }, signature: undefined },
            ],
            finish: { reason: 'tool_calls', native: 'tool_calls' },
          },
        ],
        usage: { input: 10, output: 5, total: 15, cachedInput: 4, cacheWrite: 2, reasoning: undefined, toolPrompt: undefined },
        blocked: undefined,
      },
      PLAN,
    )
    expect(answer).toEqual({
      output: { message: { role: 'assistant', content: [{ text: 'hi' }, { toolUse: { toolUseId: 'c1', name: 'f', input: { a: 1 } } }] } },
      stopReason: 'tool_use',
      usage: { inputTokens: 4, outputTokens: 5, totalTokens: 15, cacheReadInputTokens: 4, cacheWriteInputTokens: 2 },
      metrics: { latencyMs: 0 },
    })
  })

  it('a stream: blocks numbered in order, a tool call opened by contentBlockStart, messageStop then metadata', () => {
    const encoder = new ConverseStreamEncoder(PLAN)
    const out: SseOut[] = [
      ...encoder.events([
        { type: 'meta', id: undefined, model: undefined, created: undefined },
        { type: 'reasoning', choice: 0, text: 'hmm', signature: 'sig', redacted: false },
        { type: 'text', choice: 0, text: 'Hi' },
        { type: 'tool_call', choice: 0, index: 0, id: 'c1', name: 'f', args: '{"a":', signature: undefined },
        { type: 'tool_call', choice: 0, index: 0, id: undefined, name: undefined, args: '1}', signature: undefined },
        { type: 'finish', choice: 0, finish: { reason: 'tool_calls', native: undefined } },
      ]),
      ...encoder.end(),
    ]
    const events = out.map((e) => (typeof e === 'string' ? e : JSON.parse(e.data)))
    expect(events).toEqual([
      { messageStart: { role: 'assistant' } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig' } } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'Hi' } } },
      { contentBlockStop: { contentBlockIndex: 1 } },
      { contentBlockStart: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'c1', name: 'f' } } } },
      { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '{"a":' } } } },
      { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '1}' } } } },
      { contentBlockStop: { contentBlockIndex: 2 } },
      { messageStop: { stopReason: 'tool_use' } },
      { metadata: { usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, metrics: { latencyMs: 0 } } },
    ])
  })

  it('frames each kept event by its type, and an exception as one the stream declares', () => {
    expect(converseFrame({ event: 'messageStop', data: '{"messageStop":{"stopReason":"end_turn"}}' })).toEqual({
      kind: { event: 'messageStop' },
      payload: '{"stopReason":"end_turn"}',
    })
    const exception = { exception: { type: undefined, status: 429, message: 'slow' } }
    expect(converseFrame({ event: 'exception', data: JSON.stringify(exception) })).toEqual({
      kind: { exception: 'throttlingException' },
      payload: '{"message":"slow"}',
    })
    expect(streamExceptionType(502, undefined)).toBe('modelStreamErrorException')
    expect(streamExceptionType(404, undefined)).toBe('internalServerException')
    expect(streamExceptionType(500, 'ServiceUnavailableException')).toBe('serviceUnavailableException')
  })
})
