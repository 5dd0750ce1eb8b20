import { describe, expect, it } from 'vitest'
import { assembledAnswer } from '../../../src/dialects/index.js'
import type { CallPlan } from '../../../src/translate/index.js'

const PLAN: CallPlan = {
  model: 'client-model',
  upstreamModel: 'up',
  stream: true,
  includeUsage: true,
  requestId: 'req1',
  created: 1_700_000_000,
  request: {},
}
const CHUNK = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini' }
const chunk = (delta: object, finish: string | null = null, index = 0) =>
  JSON.stringify({ ...CHUNK, choices: [{ index, delta, finish_reason: finish }] })

describe('a stream assembled into its format’s whole answer', () => {
  it('chat chunks: text joined, tool call arguments joined and parsed, finish and usage kept', () => {
    const data = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
      JSON.stringify({ ...CHUNK, choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }),
      '[DONE]',
    ]
    expect(assembledAnswer('chat.completions', data, PLAN)).toMatchObject({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1694268190,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Hello',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    })
  })

  it('chat chunks of two choices stay two choices, in order', () => {
    const data = [chunk({ content: 'b' }, 'stop', 1), chunk({ content: 'a' }, 'stop', 0)]
    const answer = assembledAnswer('chat.completions', data, PLAN) as { choices: Array<{ index: number; message: { content: string } }> }
    expect(answer.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ])
  })

  it('Gemini chunks: parts merged into one candidate, finish reason and usage metadata kept', () => {
    const part = (text: string, extra: object = {}) =>
      JSON.stringify({
        candidates: [{ index: 0, content: { role: 'model', parts: [{ text }] }, ...extra }],
        modelVersion: 'gemini-2.5-flash',
      })
    const data = [
      part('Hel'),
      part('lo', { finishReason: 'STOP' }),
      JSON.stringify({ candidates: [], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 } }),
    ]
    expect(assembledAnswer('generateContent', data, PLAN)).toMatchObject({
      candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Hello' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 },
    })
  })

  it('a stream cut inside a tool call keeps the arguments that came', () => {
    const data = [chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] })]
    const answer = assembledAnswer('chat.completions', data, PLAN) as {
      choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }>
    }
    expect(JSON.parse(answer.choices[0]?.message.tool_calls[0]?.function.arguments as string)).toEqual({ _partial: '{"a":' })
  })
})
