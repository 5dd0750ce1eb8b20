import { describe, expect, it } from 'vitest'
import { ResponsesStreamEncoder } from '../../../src/dialects/openai/responses/stream.js'
import { sseEvent } from '../../../src/sse/write.js'
import type { SseOut } from '../../../src/translate/format.js'
import { planOf, responsesToGemini, typedFrames } from './helpers.js'

const REQUEST = { model: 'm', input: 'x', stream: true }

/** Runs Gemini events through the translator, each as its own chunk; returns the typed client events. */
function run(events: unknown[], fields: Record<string, unknown> = REQUEST) {
  const stream = responsesToGemini.stream(planOf(responsesToGemini, fields, true))
  let out = ''
  for (const event of events) out += stream.write(sseEvent(JSON.stringify(event)))
  return { frames: typedFrames(out + stream.end()), usage: stream.usage() }
}

const META = { modelVersion: 'gemini-2.5-flash', responseId: 'r1' }
const chunk = (parts: unknown[], extra: object = {}) => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
  ...META,
})
const USAGE = { promptTokenCount: 8, candidatesTokenCount: 5, totalTokenCount: 13 }

describe('generate-content stream to Responses events', () => {
  it('opens the response, streams text deltas in one message, and completes with the whole response', () => {
    const { frames, usage } = run([
      chunk([{ text: 'The' }]),
      chunk([{ text: ' sky.' }], { finishReason: 'STOP' }),
      { ...chunk([]), usageMetadata: USAGE },
    ])
    expect(frames.map((f) => f.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    // Every event's data names its type, and the sequence numbers count from 0 without a gap.
    expect(frames.map((f) => f.data.type)).toEqual(frames.map((f) => f.event))
    expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i))
    expect(frames[0]?.data.response).toMatchObject({
      id: 'resp_r1',
      status: 'in_progress',
      model: 'gemini-2.5-flash',
      output: [],
      usage: null,
    })
    expect(frames[2]?.data).toMatchObject({
      output_index: 0,
      item: { id: 'msg_r1_0', type: 'message', status: 'in_progress', content: [] },
    })
    expect(frames[4]?.data).toMatchObject({ item_id: 'msg_r1_0', output_index: 0, content_index: 0, delta: 'The' })
    expect(frames[6]?.data).toMatchObject({ item_id: 'msg_r1_0', text: 'The sky.' })
    const completed = frames[9]?.data.response
    expect(completed).toMatchObject({
      id: 'resp_r1',
      status: 'completed',
      output: [{ id: 'msg_r1_0', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'The sky.' }] }],
      usage: { input_tokens: 8, output_tokens: 5, total_tokens: 13 },
    })
    expect(usage).toEqual({
      input_tokens: 8,
      output_tokens: 5,
      total_tokens: 13,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  it('writes a function call as its own item: added, its arguments, done; after text, the message closes first', () => {
    const call = { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }
    const { frames } = run([chunk([{ text: 'Checking.' }]), { ...chunk([call], { finishReason: 'STOP' }), usageMetadata: USAGE }])
    expect(frames.map((f) => f.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(frames[8]?.data).toEqual({
      type: 'response.output_item.added',
      sequence_number: 8,
      output_index: 1,
      item: { id: 'fc_r1_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_r1_0_0', name: 'get_weather' },
    })
    expect(frames[10]?.data).toMatchObject({ item_id: 'fc_r1_1', output_index: 1, name: 'get_weather', arguments: '{"city":"Paris"}' })
    expect(frames[12]?.data.response).toMatchObject({
      status: 'completed',
      output: [{ type: 'message' }, { type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'call_r1_0_0' }],
    })
  })

  it('ends with response.incomplete when Gemini stopped at the token limit', () => {
    const { frames } = run([{ ...chunk([{ text: 'cut' }], { finishReason: 'MAX_TOKENS' }), usageMetadata: USAGE }])
    const last = frames[frames.length - 1]
    expect(last?.event).toBe('response.incomplete')
    expect(last?.data.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })
  })

  it('sends one error event, and nothing after it, for an error in the upstream stream', () => {
    const { frames } = run([chunk([{ text: 'Hi' }]), { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }])
    const last = frames[frames.length - 1]
    expect(last).toEqual({
      event: 'error',
      data: { type: 'error', sequence_number: frames.length - 1, code: 'UNAVAILABLE', message: 'overloaded', param: null },
    })
    expect(frames.some((f) => f.event === 'response.completed')).toBe(false)
  })

  it('ends a stream the upstream broke off with one error event', () => {
    const stream = responsesToGemini.stream(planOf(responsesToGemini, REQUEST, true))
    const before = typedFrames(stream.write(sseEvent(JSON.stringify(chunk([{ text: 'Hi' }])))))
    const after = typedFrames(stream.fail(502, 'The upstream stream broke off before its end.'))
    expect(after).toEqual([
      {
        event: 'error',
        data: {
          type: 'error',
          sequence_number: before.length,
          code: null,
          message: 'The upstream stream broke off before its end.',
          param: null,
        },
      },
    ])
  })

  it('opens and completes the response even when the upstream sent no content', () => {
    const { frames } = run([])
    expect(frames.map((f) => f.event)).toEqual(['response.created', 'response.in_progress', 'response.completed'])
    expect(frames[2]?.data.response).toMatchObject({ id: 'resp_req1', model: 'client-model', output: [] })
  })
})

describe('Responses stream writer', () => {
  it('writes a refusal as a content part of its own, beside the text, in the same message', () => {
    const encoder = new ResponsesStreamEncoder(planOf(responsesToGemini, REQUEST, true))
    const named = (out: SseOut[]) => out.map((o) => (typeof o === 'string' ? o : o.event))
    const first = named(
      encoder.events([
        { type: 'text', choice: 0, text: 'Well, ' },
        { type: 'refusal', choice: 0, text: 'no.' },
        { type: 'text', choice: 1, text: 'other choices are left out' },
      ]),
    )
    expect(first).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.content_part.added',
      'response.refusal.delta',
    ])
    const end = encoder.end()
    expect(named(end)).toEqual(['response.refusal.done', 'response.content_part.done', 'response.output_item.done', 'response.completed'])
    const completed = end[3]
    const response = typeof completed === 'string' ? undefined : JSON.parse(completed?.data ?? '{}').response
    expect(response.output[0].content).toEqual([
      { type: 'output_text', annotations: [], logprobs: [], text: 'Well, ' },
      { type: 'refusal', refusal: 'no.' },
    ])
  })
})
