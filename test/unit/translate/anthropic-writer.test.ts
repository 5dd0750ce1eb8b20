// The Messages request rules, as a request of another format is written for an Anthropic upstream: the required
// max_tokens, thinking within its bounds, tool choices and results, what Anthropic refuses left out or reordered,
// and the members Messages lacks refused by the client's own name.
import { describe, expect, it } from 'vitest'
import { anthropic, gemini, openai, translatorFor } from '../../../src/dialects/index.js'
import type { CallInfo, Translator } from '../../../src/translate/index.js'
import { callInfo, ok, refusedField, WEATHER_TOOL } from './helpers.js'

const chatToMessages = translatorFor(openai, anthropic, 'chat.completions')!
const responsesToMessages = translatorFor(openai, anthropic, 'responses')!
const geminiToMessages = translatorFor(gemini, anthropic, 'generateContent')!

const user = [{ role: 'user', content: 'x' }]

/** The Messages request `translator` writes for `fields`, with a model whose `maxOutputTokens` is `max`. */
function written(translator: Translator, fields: Record<string, unknown>, max?: number): Record<string, unknown> {
  const call: CallInfo = { ...callInfo(), ...(max === undefined ? {} : { maxOutputTokens: max }) }
  return ok(translator.request(fields, call)).body as Record<string, unknown>
}

describe('a request written for an Anthropic upstream', () => {
  const chat = (fields: Record<string, unknown>) => ({ model: 'm', messages: user, ...fields })

  it('always has max_tokens: the client’s limit, else the model’s maxOutputTokens, else 4096', () => {
    expect(written(chatToMessages, chat({ max_completion_tokens: 300 }), 8000)).toMatchObject({ max_tokens: 300 })
    expect(written(chatToMessages, chat({}), 8000)).toMatchObject({ max_tokens: 8000 })
    expect(written(chatToMessages, chat({}))).toEqual({
      model: 'upstream-model',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'x' }],
    })
    expect(written(responsesToMessages, { model: 'm', input: 'x', max_output_tokens: 77 })).toMatchObject({ max_tokens: 77 })
    expect(written(geminiToMessages, { contents: [{ parts: [{ text: 'x' }] }] })).toMatchObject({ max_tokens: 4096 })
  })

  it.each([
    [{ reasoning_effort: 'high' }, { thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }],
    [{ reasoning_effort: 'minimal' }, { thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }],
    [{ reasoning_effort: 'none' }, { thinking: { type: 'disabled' } }],
  ])('sends chat’s %j as adaptive thinking at that effort', (fields, expected) => {
    expect(written(chatToMessages, chat(fields))).toMatchObject(expected)
  })

  it.each([
    [{ thinkingBudget: 2048 }, 4096, { type: 'enabled', budget_tokens: 2048 }],
    [{ thinkingBudget: 100 }, 4096, { type: 'enabled', budget_tokens: 1024 }],
    [{ thinkingBudget: 24576 }, 4096, { type: 'enabled', budget_tokens: 4095 }],
    [{ thinkingBudget: 2048 }, 1000, { type: 'disabled' }],
    [{ thinkingBudget: -1 }, 4096, { type: 'adaptive' }],
    [{ thinkingBudget: 0 }, 4096, { type: 'disabled' }],
  ])('sends Gemini’s %j within max_tokens %i as %j', (thinkingConfig, maxOutputTokens, thinking) => {
    const body = written(geminiToMessages, {
      contents: [{ parts: [{ text: 'x' }] }],
      generationConfig: { thinkingConfig, maxOutputTokens },
    })
    expect(body.thinking).toEqual(thinking)
    expect(body.max_tokens).toBe(maxOutputTokens)
  })

  it('writes tools, tool choices and one tool call per answer', () => {
    const tools = [WEATHER_TOOL, { type: 'function', function: { name: 'now' } }]
    expect(written(chatToMessages, chat({ tools, tool_choice: 'required', parallel_tool_calls: false }))).toMatchObject({
      tools: [
        { name: 'get_current_weather', description: WEATHER_TOOL.function.description, input_schema: WEATHER_TOOL.function.parameters },
        { name: 'now', input_schema: { type: 'object', properties: {} } },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    })
    expect(written(chatToMessages, chat({ tools, parallel_tool_calls: false })).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    })
    expect(written(chatToMessages, chat({ tools, tool_choice: { type: 'function', function: { name: 'now' } } })).tool_choice).toEqual({
      type: 'tool',
      name: 'now',
    })
    expect(written(chatToMessages, chat({ tools, tool_choice: 'none' })).tool_choice).toEqual({ type: 'none' })
    const every = {
      type: 'allowed_tools',
      allowed_tools: { mode: 'required', tools: tools.map((t) => ({ type: 'function', function: { name: t.function.name } })) },
    }
    expect(written(chatToMessages, chat({ tools, tool_choice: every })).tool_choice).toEqual({ type: 'any' })
  })

  it('writes tool results, a failed Gemini one with is_error, and a system instruction as text or blocks', () => {
    const body = written(geminiToMessages, {
      systemInstruction: { parts: [{ text: 'a' }, { text: 'b' }] },
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        {
          role: 'model',
          parts: [{ functionCall: { id: 'c1', name: 'f', args: {} } }, { functionCall: { id: 'c2', name: 'f', args: {} } }],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'c1', name: 'f', response: { t: 1 } } },
            { functionResponse: { id: 'c2', name: 'f', response: { error: 'boom' } } },
          ],
        },
      ],
    })
    expect(body.system).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ])
    expect((body.messages as unknown[])[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: '{"t":1}' },
        { type: 'tool_result', tool_use_id: 'c2', content: 'boom', is_error: true },
      ],
    })
    expect(written(chatToMessages, { model: 'm', messages: [{ role: 'system', content: 'be brief' }, ...user] }).system).toBe('be brief')
  })

  it.each([
    ['n', { n: 2 }],
    ['seed', { seed: 7 }],
    ['presence_penalty', { presence_penalty: 0.5 }],
    ['frequency_penalty', { frequency_penalty: 0.5 }],
    ['response_format', { response_format: { type: 'json_object' } }],
    [
      'tool_choice',
      {
        tools: [WEATHER_TOOL, { type: 'function', function: { name: 'a' } }, { type: 'function', function: { name: 'b' } }],
        tool_choice: {
          type: 'allowed_tools',
          allowed_tools: {
            mode: 'required',
            tools: [
              { type: 'function', function: { name: 'a' } },
              { type: 'function', function: { name: 'b' } },
            ],
          },
        },
      },
    ],
    ['messages', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }],
  ])('refuses chat’s %s, which Messages has no field for', (field, fields) => {
    expect(refusedField(chatToMessages, chat(fields))).toBe(field)
  })

  it('refuses Gemini’s members Messages lacks by their own names', () => {
    const request = (generationConfig: Record<string, unknown>) => ({ contents: [{ parts: [{ text: 'x' }] }], generationConfig })
    expect(refusedField(geminiToMessages, request({ candidateCount: 2 }))).toBe('generationConfig.candidateCount')
    expect(refusedField(geminiToMessages, request({ seed: 1 }))).toBe('generationConfig.seed')
    expect(refusedField(geminiToMessages, request({ responseMimeType: 'application/json' }))).toBe('generationConfig.responseMimeType')
    expect(written(geminiToMessages, request({ topK: 3 }))).toMatchObject({ top_k: 3 })
  })
})

describe('a request written for an Anthropic upstream, as Anthropic checks it', () => {
  it('leaves empty text out, and puts tool results before what else the user says', () => {
    const body = written(geminiToMessages, {
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ text: '', thoughtSignature: 'c2ln' }, { functionCall: { id: 'c1', name: 'f', args: {} } }] },
        { role: 'user', parts: [{ text: 'Here it is:' }, { functionResponse: { id: 'c1', name: 'f', response: { output: 'ok' } } }] },
      ],
    })
    expect(body.messages).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'f', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'ok' },
          { type: 'text', text: 'Here it is:' },
        ],
      },
    ])
  })
})
