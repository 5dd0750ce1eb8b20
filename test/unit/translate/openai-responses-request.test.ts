import { describe, expect, it } from 'vitest'
import type { GeminiRequest } from '../../../src/dialects/gemini/generate-content/wire.js'
import { carry } from '../../../src/translate/carry.js'
import { planOf, refusedField, responsesToGemini, upstreamBody } from './helpers.js'

const body = (fields: Record<string, unknown>) => upstreamBody(responsesToGemini, { model: 'm', ...fields }) as GeminiRequest
const refused = (fields: Record<string, unknown>) => refusedField(responsesToGemini, { model: 'm', input: 'x', ...fields })

const PIXEL = 'iVBORw0KGgo='
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
}

describe('Responses request to generate-content', () => {
  it('takes a string input as one user turn and instructions as the system instruction', () => {
    expect(body({ input: 'Hello', instructions: 'Be brief.' })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    })
  })

  it('reads message items, typed or short, with input_text, input_image and input_file parts', () => {
    const input = [
      { role: 'developer', content: 'Rules.' },
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'More rules.' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look' },
          { type: 'input_image', image_url: `data:image/png;base64,${PIXEL}`, detail: 'auto' },
          { type: 'input_image', image_url: 'https://example.com/cat.jpg' },
          { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
        ],
      },
      {
        id: 'msg_1',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Seen.', annotations: [] }],
      },
      { role: 'user', content: 'And now?' },
    ]
    expect(body({ input, instructions: 'First.' })).toEqual({
      systemInstruction: { parts: [{ text: 'First.' }, { text: 'Rules.' }, { text: 'More rules.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Look' },
            { inlineData: { mimeType: 'image/png', data: PIXEL } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
        { role: 'model', parts: [{ text: 'Seen.' }] },
        { role: 'user', parts: [{ text: 'And now?' }] },
      ],
    })
  })

  it('joins a function_call to the assistant turn before it and its outputs into one user turn, ids kept', () => {
    const input = [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
      {
        type: 'function_call_output',
        call_id: 'call_b',
        output: [
          { type: 'input_text', text: '{"temp":' },
          { type: 'input_text', text: '20}' },
        ],
      },
    ]
    expect(body({ input, tools: [WEATHER] }).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { id: 'call_b', name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_a', name: 'get_weather', response: { output: 'sunny' } } },
          { functionResponse: { id: 'call_b', name: 'get_weather', response: { temp: 20 } } },
        ],
      },
    ])
  })

  it('returns a thought signature a function_call item carries to Gemini with its call', () => {
    const input = [
      { role: 'user', content: 'x' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', extra_content: { google: { thought_signature: 'c2ln' } } },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ]
    expect(body({ input }).contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { id: 'c1', name: 'f', args: {} }, thoughtSignature: 'c2ln' }],
    })
  })

  it('declares function tools, strict by default as the Responses API has them (mode VALIDATED)', () => {
    const strict = body({ input: 'x', tools: [WEATHER] })
    expect(strict.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'The weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } },
        ],
      },
    ])
    expect(strict.toolConfig).toEqual({ functionCallingConfig: { mode: 'VALIDATED' } })
    expect(body({ input: 'x', tools: [{ ...WEATHER, strict: false }] }).toolConfig).toBeUndefined()
  })

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', name: 'get_weather' },
      { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    ],
    [
      { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_weather' }] },
      { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    ],
  ])('maps tool_choice %j', (choice, config) => {
    expect(body({ input: 'x', tools: [{ ...WEATHER, strict: false }], tool_choice: choice }).toolConfig).toEqual({
      functionCallingConfig: config,
    })
  })

  it('maps text.format json_schema and json_object to a JSON answer', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }
    expect(body({ input: 'x', text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { name: { type: 'STRING' } }, required: ['name'] },
    })
    expect(body({ input: 'x', text: { format: { type: 'json_object' } } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    })
    // LangChain sends an empty `text` when it wants plain text.
    expect(body({ input: 'x', text: {} }).generationConfig).toBeUndefined()
    expect(body({ input: 'x', text: { format: { type: 'text' }, verbosity: 'medium' } }).generationConfig).toBeUndefined()
  })

  it('maps temperature, top_p, max_output_tokens and reasoning effort to the generation config', () => {
    expect(
      body({ input: 'x', temperature: 0.2, top_p: 0.9, max_output_tokens: 64, reasoning: { effort: 'low' } }).generationConfig,
    ).toEqual({
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 64,
      thinkingConfig: { thinkingBudget: 1024 },
    })
    expect(body({ input: 'x', reasoning: { effort: 'none' } }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } })
    expect(body({ input: 'x', reasoning: { effort: null } }).generationConfig).toBeUndefined()
  })

  it('accepts what changes nothing the model says: store false, metadata, stream options, the encrypted-reasoning include', () => {
    const fields = {
      input: 'x',
      store: false,
      metadata: { user: 'u1' },
      stream: true,
      stream_options: { include_obfuscation: false },
      include: ['reasoning.encrypted_content'],
      parallel_tool_calls: true,
      truncation: 'disabled',
      background: false,
    }
    expect(body(fields)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] })
  })

  it('drops what only hints the provider or only its own model can read, and names each by path in the plan', () => {
    const fields = {
      model: 'm',
      input: [
        { role: 'user', content: 'x' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: null, encrypted_content: 'gAAAA-openai-only' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
      tools: [
        { type: 'web_search', external_web_access: true },
        { ...WEATHER, name: 'f', strict: false },
      ],
      reasoning: { summary: 'auto' },
      store: true,
      metadata: { a: '1' },
      user: 'u1',
      safety_identifier: 's',
      prompt_cache_key: 'k',
      prompt_cache_retention: '24h',
      client_metadata: { session: 'x' },
      service_tier: 'flex',
    }
    expect(planOf(responsesToGemini, fields).dropped).toEqual([
      'store',
      'metadata',
      'user',
      'safety_identifier',
      'prompt_cache_key',
      'prompt_cache_retention',
      'client_metadata',
      'service_tier',
      'input[1]',
      'tools[0]',
      'reasoning.summary',
    ])
    expect(body(fields).contents).toEqual([
      { role: 'user', parts: [{ text: 'x' }] },
      { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'f', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'f', response: { output: 'ok' } } }] },
    ])
    expect(body(fields).tools).toEqual([
      { functionDeclarations: [{ name: 'f', description: 'The weather', parameters: expect.any(Object) }] },
    ])
  })

  it('gives the functions of a namespace their namespaced names, in declarations and in calls sent back', () => {
    const fields = {
      input: [
        { role: 'user', content: 'x' },
        { type: 'function_call', call_id: 'c1', namespace: 'crm', name: 'find', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
      tools: [{ type: 'namespace', name: 'crm', description: 'The CRM.', tools: [{ ...WEATHER, name: 'find', strict: false }] }],
    }
    expect(body(fields).tools).toEqual([
      { functionDeclarations: [{ name: 'crm__find', description: 'The CRM.\n\nThe weather', parameters: expect.any(Object) }] },
    ])
    expect(body(fields).contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { id: 'c1', name: 'crm__find', args: {} } }] })
  })

  it('gives a call back the thought signature the reasoning item before it carried', () => {
    const packed = carry({ reasoning: [], signature: 'c2ln' })
    const fields = {
      input: [
        { role: 'user', content: 'x' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: packed },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      ],
    }
    expect(body(fields).contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { id: 'c1', name: 'f', args: {} }, thoughtSignature: 'c2ln' }],
    })
    expect(planOf(responsesToGemini, { model: 'm', ...fields }).dropped).toBeUndefined()
  })

  it.each([
    ['previous_response_id', { previous_response_id: 'resp_123' }],
    ['conversation', { conversation: 'conv_123' }],
    ['prompt', { prompt: { id: 'pmpt_123' } }],
    ['background', { background: true }],
    ['tools[0].type', { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }],
    ['tools[1].type', { tools: [WEATHER, { type: 'file_search', vector_store_ids: ['vs_1'] }] }],
    ['tool_choice.type', { tool_choice: { type: 'web_search_preview' } }],
    ['tool_choice.mode', { tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] } }],
    ['tools[1].strict', { tools: [WEATHER, { ...WEATHER, name: 'g', strict: false }] }],
    ['include[0]', { include: ['file_search_call.results'] }],
    ['parallel_tool_calls', { parallel_tool_calls: false }],
    ['truncation', { truncation: 'auto' }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['reasoning.summary', { reasoning: { effort: 'low', summary: 'detailed' } }],
    ['reasoning.effort', { reasoning: { effort: 'maximal' } }],
    ['text.verbosity', { text: { verbosity: 'low' } }],
    ['text.format.type', { text: { format: { type: 'grammar' } } }],
    ['max_tool_calls', { max_tool_calls: 3 }],
  ])('refuses %s', (field, fields) => {
    expect(refused(fields)).toBe(field)
  })

  it.each([
    ['input', { input: undefined }],
    ['input[0]', { input: [{ type: 'item_reference', id: 'msg_1' }] }],
    ['input[0].type', { input: [{ type: 'web_search_call', id: 'ws_1' }] }],
    [
      'input[1].role',
      {
        input: [
          { role: 'user', content: 'x' },
          { role: 'system', content: 'late' },
        ],
      },
    ],
    ['input[0].content[0].file_id', { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }],
    [
      'input[0].content[0].detail',
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'high' }] }] },
    ],
    ['input[0].content[0].file_url', { input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }] }],
    ['input[0].call_id', { input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] }],
    [
      'input[1].output[0].type',
      {
        input: [
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://x/y.png' }] },
        ],
      },
    ],
    ['input[0].arguments', { input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: 'not json' }] }],
    ['input[0].phase', { input: [{ role: 'assistant', content: 'x', phase: 'final_answer' }] }],
  ])('refuses the input item field %s', (field, fields) => {
    expect(refused(fields)).toBe(field)
  })

  it('says why a field that needs the upstream’s storage is refused', () => {
    const result = responsesToGemini.request(
      { model: 'm', input: 'x', previous_response_id: 'resp_1' },
      {
        model: 'm',
        upstreamModel: 'u',
        stream: false,
        requestId: 'r',
      },
    )
    expect(result).toEqual({
      ok: false,
      field: 'previous_response_id',
      message: expect.stringContaining("send the whole conversation in 'input'"),
    })
  })
})
