import { describe, expect, it } from 'vitest'
import { carry } from '../../../src/translate/carry.js'
import type { Translated } from '../../../src/translate/index.js'
import { ok, planOf, responsesToGemini } from './helpers.js'

const REQUEST = { model: 'm', input: 'x' }

/** A Gemini answer as a Responses client gets it, for a request with `fields`. */
function answer(gemini: unknown, fields: Record<string, unknown> = REQUEST): Record<string, unknown> {
  const result: Translated<object> = responsesToGemini.response(Buffer.from(JSON.stringify(gemini)), planOf(responsesToGemini, fields))
  return ok(result) as Record<string, unknown>
}

const candidate = (parts: unknown[], finishReason = 'STOP') => ({ content: { role: 'model', parts }, finishReason, index: 0 })
const META = { modelVersion: 'gemini-2.5-flash', responseId: 'r1' }
const USAGE = { promptTokenCount: 8, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 2, totalTokenCount: 16 }

describe('generate-content answer to a Responses object', () => {
  it('writes a completed response: a message with output_text, the usage, the request’s settings echoed', () => {
    const request = { model: 'm', input: 'x', instructions: 'Be brief.', temperature: 0.5, max_output_tokens: 100, metadata: { a: '1' } }
    expect(
      answer({ candidates: [candidate([{ text: 'The sky ' }, { text: 'is blue.' }])], usageMetadata: USAGE, ...META }, request),
    ).toEqual({
      id: 'resp_r1',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: 100,
      model: 'gemini-2.5-flash',
      output: [
        {
          id: 'msg_r1_0',
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'The sky is blue.' }],
          role: 'assistant',
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: 0.5,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      truncation: 'disabled',
      usage: {
        input_tokens: 8,
        input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 },
        output_tokens: 8,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 16,
      },
      metadata: { a: '1' },
    })
  })

  it('writes each function call as an item of its own, with the call’s id (a made one when Gemini gave none), its signature in a reasoning item before it', () => {
    const parts = [
      { text: 'Let me check.' },
      { functionCall: { id: 'g1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
      { functionCall: { name: 'get_time', args: {} } },
    ]
    expect(answer({ candidates: [candidate(parts)], ...META }).output).toEqual([
      {
        id: 'msg_r1_0',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Let me check.' }],
        role: 'assistant',
      },
      { id: 'rs_r1_1', type: 'reasoning', summary: [], encrypted_content: carry({ reasoning: [], signature: 'c2ln' }) },
      {
        id: 'fc_r1_2',
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: 'g1',
        name: 'get_weather',
      },
      { id: 'fc_r1_3', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'call_r1_0_1', name: 'get_time' },
    ])
  })

  it('writes a call of a namespaced function in its namespace, as the request declared it', () => {
    const tools = [{ type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'find', strict: false }] }]
    const parts = [{ functionCall: { id: 'g1', name: 'crm__find', args: {} } }, { functionCall: { id: 'g2', name: 'other__x', args: {} } }]
    expect(answer({ candidates: [candidate(parts)], ...META }, { model: 'm', input: 'x', tools }).output).toEqual([
      { id: 'fc_r1_0', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'g1', name: 'find', namespace: 'crm' },
      { id: 'fc_r1_1', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'g2', name: 'other__x' },
    ])
  })

  it.each([
    ['MAX_TOKENS', 'max_output_tokens'],
    ['SAFETY', 'content_filter'],
  ])('is incomplete when Gemini stopped with %s', (reason, incomplete) => {
    const body = answer({ candidates: [candidate([{ text: 'cut' }], reason)], ...META })
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: incomplete } })
  })

  it('answers a refused prompt with an empty, incomplete response', () => {
    const body = answer({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4 }, ...META })
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] })
  })

  it('names the request id when Gemini sent no response id, and echoes tools and the text format', () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }]
    const text = { format: { type: 'json_object' } }
    const body = answer({ candidates: [candidate([{ text: '{}' }])] }, { model: 'm', input: 'x', tools, text, tool_choice: 'required' })
    expect(body).toMatchObject({ id: 'resp_req1', model: 'client-model', tools, tool_choice: 'required', text: { format: text.format } })
  })

  it('turns an upstream error into OpenAI’s error shape, status kept by the caller', () => {
    const error = responsesToGemini.error(
      429,
      Buffer.from('{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}'),
    )
    expect(error).toEqual({ error: { message: 'Quota exceeded', type: 'rate_limit_error', param: null, code: 'RESOURCE_EXHAUSTED' } })
  })
})
