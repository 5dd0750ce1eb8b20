// The Messages request rules, as a Messages request is read: system text and blocks, tool uses and results,
// thinking and effort, hints dropped, what is refused. How one is written for an Anthropic upstream is in
// anthropic-writer.test.ts.
import { describe, expect, it } from 'vitest'
import { anthropic, gemini, openai, translatorFor } from '../../../src/dialects/index.js'
import { carry } from '../../../src/translate/carry.js'
import { callInfo, ok, planOf, refusedField, strictlyRefusedField, upstreamBody } from './helpers.js'

const messagesToChat = translatorFor(anthropic, openai, 'messages')!
const messagesToGemini = translatorFor(anthropic, gemini, 'messages')!

const user = [{ role: 'user', content: 'x' }]
/** A Messages request with `fields`. */
const messages = (fields: Record<string, unknown>) => ({ model: 'claude', max_tokens: 1024, messages: user, ...fields })
const WEATHER = {
  name: 'get_weather',
  description: 'The weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
}

describe('a Messages request read', () => {
  it('takes system text or blocks, and keeps a system message mid-conversation where it stands', () => {
    const fields = messages({
      system: [
        { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Be kind.' },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: 'hello' },
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'why?' },
      ],
    })
    expect(upstreamBody(messagesToChat, fields)).toMatchObject({
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Be brief.' },
            { type: 'text', text: 'Be kind.' },
          ],
        },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'why?' },
      ],
    })
    expect(upstreamBody(messagesToGemini, fields)).toMatchObject({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Be kind.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'model', parts: [{ text: 'hello' }] },
        { role: 'user', parts: [{ text: 'Answer in French.' }] },
        { role: 'user', parts: [{ text: 'why?' }] },
      ],
    })
    expect((upstreamBody(messagesToChat, messages({ system: 'Be brief.' })) as { messages: unknown[] }).messages[0]).toEqual({
      role: 'system',
      content: 'Be brief.',
    })
  })

  it('drops the hints, wherever they are, and names each by path', () => {
    const fields = messages({
      metadata: { user_id: 'u1' },
      context_management: { edits: [] },
      cache_control: { type: 'ephemeral' },
      service_tier: 'auto',
      inference_geo: 'us',
      thinking: { type: 'enabled', budget_tokens: 2048, display: 'omitted' },
      system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }],
      tools: [
        { ...WEATHER, cache_control: { type: 'ephemeral' }, eager_input_streaming: true },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' }, cache_control: { type: 'ephemeral' } }],
        },
      ],
    })
    const { body, plan } = ok(messagesToGemini.request(fields, callInfo()))
    expect(plan.dropped).toEqual([
      'metadata',
      'context_management',
      'cache_control',
      'service_tier',
      'inference_geo',
      'system[0].cache_control',
      'messages[0].content[0].cache_control',
      'tools[0].cache_control',
      'tools[0].eager_input_streaming',
      'tools[1]',
      'thinking.display',
    ])
    expect(JSON.stringify(body)).not.toMatch(/cache_control|ephemeral|user_id|web_search/)
  })

  it('sends tool uses and results, a failed one as Gemini’s error response', () => {
    const fields = messages({
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: '15 ' },
                { type: 'text', text: 'degrees' },
              ],
            },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'no such city', is_error: true },
            { type: 'text', text: 'Thanks.' },
          ],
        },
      ],
    })
    expect(upstreamBody(messagesToChat, fields)).toMatchObject({
      messages: [
        { role: 'user' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1' }, { id: 'toolu_2' }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: '15 degrees' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'no such city' },
        { role: 'user', content: 'Thanks.' },
      ],
    })
    expect(upstreamBody(messagesToGemini, fields)).toMatchObject({
      contents: [
        { role: 'user' },
        { role: 'model', parts: [{ functionCall: { id: 'toolu_1' } }, { functionCall: { id: 'toolu_2' } }] },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'toolu_1', name: 'get_weather', response: { output: '15 degrees' } } },
            { functionResponse: { id: 'toolu_2', name: 'get_weather', response: { error: 'no such city' } } },
            { text: 'Thanks.' },
          ],
        },
      ],
    })
  })

  it.each([
    [{ type: 'auto' }, 'auto', { mode: 'AUTO' }],
    [{ type: 'any' }, 'required', { mode: 'ANY' }],
    [{ type: 'none' }, 'none', { mode: 'NONE' }],
    [
      { type: 'tool', name: 'get_weather' },
      { type: 'function', function: { name: 'get_weather' } },
      { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    ],
  ])('takes tool_choice %j', (choice, chat, config) => {
    expect(upstreamBody(messagesToChat, messages({ tools: [WEATHER], tool_choice: choice }))).toMatchObject({ tool_choice: chat })
    expect(upstreamBody(messagesToGemini, messages({ tools: [WEATHER], tool_choice: choice }))).toMatchObject({
      toolConfig: { functionCallingConfig: config },
    })
  })

  it('turns one tool call per answer into parallel_tool_calls: false, and is refused by Gemini, which has none', () => {
    const fields = messages({ tools: [WEATHER], tool_choice: { type: 'auto', disable_parallel_tool_use: true } })
    expect(upstreamBody(messagesToChat, fields)).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: false })
    expect(refusedField(messagesToGemini, fields)).toBe('tool_choice.disable_parallel_tool_use')
  })

  it.each([
    [{ thinking: { type: 'enabled', budget_tokens: 2048 } }, 'medium', { thinkingBudget: 2048 }],
    [{ thinking: { type: 'enabled', budget_tokens: 31999 } }, 'high', { thinkingBudget: 31999 }],
    [{ thinking: { type: 'adaptive' } }, undefined, { thinkingBudget: -1 }],
    [{ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }, 'low', { thinkingBudget: 1024 }],
    [{ output_config: { effort: 'max' } }, 'xhigh', { thinkingBudget: 32768 }],
    [{ thinking: { type: 'disabled' } }, 'none', { thinkingBudget: 0 }],
  ])('reads %j as a reasoning effort or budget', (fields, effort, thinkingConfig) => {
    expect((upstreamBody(messagesToChat, messages(fields)) as Record<string, unknown>).reasoning_effort).toBe(effort)
    expect(upstreamBody(messagesToGemini, messages(fields))).toMatchObject({ generationConfig: { thinkingConfig } })
  })

  it('takes the budget when both a budget and an effort are set, and names the effort dropped', () => {
    const { body, plan } = ok(
      messagesToGemini.request(
        messages({ thinking: { type: 'enabled', budget_tokens: 4096 }, output_config: { effort: 'low' } }),
        callInfo(),
      ),
    )
    expect(body).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: 4096 } } })
    expect(plan.dropped).toEqual(['output_config.effort'])
  })

  it('sends top_k to Gemini, drops and names it toward chat (refused under translation.strict), and takes stop sequences, sampling and a JSON schema answer', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }
    const fields = messages({
      top_k: 5,
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      output_config: { format: { type: 'json_schema', schema } },
    })
    expect(upstreamBody(messagesToGemini, fields)).toMatchObject({
      generationConfig: {
        topK: 5,
        temperature: 0.2,
        topP: 0.9,
        stopSequences: ['END'],
        maxOutputTokens: 1024,
        responseMimeType: 'application/json',
      },
    })
    expect(strictlyRefusedField(messagesToChat, fields)).toBe('top_k')
    expect(planOf(messagesToChat, fields).dropped).toEqual(['top_k'])
    expect(upstreamBody(messagesToChat, fields)).not.toHaveProperty('top_k')
    expect(upstreamBody(messagesToChat, fields)).toMatchObject({
      temperature: 0.2,
      stop: ['END'],
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema, strict: true } },
    })
  })

  it('reads images inline and by URL and a PDF with its title', () => {
    const fields = messages({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://x/y.jpg' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'a.pdf' },
          ],
        },
      ],
    })
    expect(upstreamBody(messagesToChat, fields)).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'https://x/y.jpg' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
          ],
        },
      ],
    })
  })

  it('gives a tool use back the Gemini thought signature the thinking block before it carried', () => {
    const fields = messages({
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature: carry({ reasoning: [], signature: 'c2ln' }) },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
      ],
    })
    expect((upstreamBody(messagesToGemini, fields) as { contents: unknown[] }).contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { id: 'toolu_1', name: 'f', args: {} }, thoughtSignature: 'c2ln' }],
    })
    // A thinking block of Claude's own is for Claude: another format's model is not sent it.
    const own = {
      ...fields,
      messages: [
        user[0],
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'EqQB' },
            { type: 'text', text: 'y' },
          ],
        },
      ],
    }
    expect((upstreamBody(messagesToChat, own) as { messages: unknown[] }).messages[1]).toEqual({ role: 'assistant', content: 'y' })
  })

  it.each([
    ['container', { container: 'c1' }],
    ['mcp_servers', { mcp_servers: [] }],
    ['tools[0].type', { tools: [{ type: 'bash_20250124', name: 'bash' }] }],
    [
      'tools[1].strict',
      {
        tools: [
          { ...WEATHER, strict: true },
          { ...WEATHER, name: 'g' },
        ],
      },
    ],
    ['thinking.type', { thinking: { type: 'sometimes' } }],
    ['output_config.effort', { output_config: { effort: 'extreme' } }],
    ['messages[0].role', { messages: [{ role: 'tool', content: 'x' }] }],
    [
      'messages[0].content[0].source.file_id',
      { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f1' } }] }] },
    ],
    ['messages[0].content[0].type', { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }] }],
    ['messages[0].content[0].tool_use_id', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope' }] }] }],
    [
      'messages[2].content[0].content[0].type',
      {
        messages: [
          user[0],
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
            ],
          },
        ],
      },
    ],
  ])('refuses %s', (field, fields) => {
    expect(refusedField(messagesToChat, messages(fields))).toBe(field)
    expect(refusedField(messagesToGemini, messages(fields))).toBe(field)
  })
})
