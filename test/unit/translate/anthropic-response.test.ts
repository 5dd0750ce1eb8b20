// The Messages answer rules: stop reasons both ways, usage with the cache's two counts kept apart, errors, and
// what a model needs back (Claude's thinking, a Gemini thought signature) carried through each client's format
// and restored when the client sends it back.
import { describe, expect, it } from 'vitest'
import { anthropic, gemini, openai, translatorFor } from '../../../src/dialects/index.js'
import { carry } from '../../../src/translate/carry.js'
import type { Translator } from '../../../src/translate/index.js'
import { ok, planOf, upstreamBody } from './helpers.js'

const messagesToChat = translatorFor(anthropic, openai, 'messages')!
const messagesToGemini = translatorFor(anthropic, gemini, 'messages')!
const chatToMessages = translatorFor(openai, anthropic, 'chat.completions')!
const responsesToMessages = translatorFor(openai, anthropic, 'responses')!
const geminiToMessages = translatorFor(gemini, anthropic, 'generateContent')!

const MESSAGES_REQUEST = { model: 'claude', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] }
const CHAT_REQUEST = { model: 'm', messages: [{ role: 'user', content: 'x' }] }
const RESPONSES_REQUEST = { model: 'm', input: 'x' }
const GEMINI_REQUEST = { contents: [{ parts: [{ text: 'x' }] }] }

/** An upstream answer as the client of `translator` gets it for `request`. */
function answer(translator: Translator, request: Record<string, unknown>, upstream: unknown): Record<string, unknown> {
  return ok(translator.response(Buffer.from(JSON.stringify(upstream)), planOf(translator, request))) as Record<string, unknown>
}

const SIGNATURE = 'EqQBCgIYAhIM1gbc'
/** An Anthropic message: Claude thought, spoke, and called a tool. */
const CLAUDE = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'Weather first.', signature: SIGNATURE },
    { type: 'text', text: 'Checking.' },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 20 },
}
const withStop = (stop_reason: string, stop_sequence: string | null = null) => ({
  ...CLAUDE,
  content: [{ type: 'text', text: 'x' }],
  stop_reason,
  stop_sequence,
})

describe('an Anthropic answer for another format’s client', () => {
  it.each([
    ['end_turn', 'stop', 'completed', 'STOP'],
    ['stop_sequence', 'stop', 'completed', 'STOP'],
    ['max_tokens', 'length', 'incomplete', 'MAX_TOKENS'],
    ['model_context_window_exceeded', 'length', 'incomplete', 'MAX_TOKENS'],
    ['tool_use', 'tool_calls', 'completed', 'STOP'],
    ['refusal', 'content_filter', 'incomplete', 'SAFETY'],
    ['pause_turn', 'stop', 'completed', 'OTHER'],
  ])('stops with %s: chat %s, Responses %s, Gemini %s', (reason, chat, status, geminiReason) => {
    expect(answer(chatToMessages, CHAT_REQUEST, withStop(reason))).toMatchObject({ choices: [{ finish_reason: chat }] })
    expect(answer(responsesToMessages, RESPONSES_REQUEST, withStop(reason))).toMatchObject({ status })
    expect(answer(geminiToMessages, GEMINI_REQUEST, withStop(reason))).toMatchObject({ candidates: [{ finishReason: geminiReason }] })
  })

  it('counts the tokens read from the cache and written to it as input, and reports them apart where the format can', () => {
    expect(answer(chatToMessages, CHAT_REQUEST, CLAUDE).usage).toEqual({
      prompt_tokens: 1110,
      completion_tokens: 20,
      total_tokens: 1130,
      prompt_tokens_details: { cached_tokens: 1000 },
    })
    expect(answer(responsesToMessages, RESPONSES_REQUEST, CLAUDE).usage).toEqual({
      input_tokens: 1110,
      input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 100 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1130,
    })
    expect(answer(geminiToMessages, GEMINI_REQUEST, CLAUDE).usageMetadata).toEqual({
      promptTokenCount: 1110,
      candidatesTokenCount: 20,
      totalTokenCount: 1130,
      cachedContentTokenCount: 1000,
    })
  })

  it('carries Claude’s thinking to a chat client on its tool call, and sends it back to Claude as it was', () => {
    const completion = answer(chatToMessages, CHAT_REQUEST, CLAUDE) as { choices: { message: Record<string, unknown> }[] }
    const message = completion.choices[0]?.message ?? {}
    expect(message).toMatchObject({
      content: 'Checking.',
      tool_calls: [{ id: 'toolu_1', extra_content: { google: { thought_signature: expect.any(String) } } }],
    })
    expect(JSON.stringify(message)).not.toContain('Weather first.')
    const next = upstreamBody(chatToMessages, {
      model: 'm',
      messages: [...CHAT_REQUEST.messages, message, { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' }],
    }) as { messages: unknown[] }
    expect(next.messages[1]).toEqual({ role: 'assistant', content: CLAUDE.content })
  })

  it('carries Claude’s thinking to a Responses client in a reasoning item, and sends it back to Claude as it was', () => {
    const output = answer(responsesToMessages, RESPONSES_REQUEST, CLAUDE).output as Record<string, unknown>[]
    expect(output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call'])
    expect(output[0]).toEqual({ id: 'rs_msg_01_0', type: 'reasoning', summary: [], encrypted_content: expect.any(String) })
    const next = upstreamBody(responsesToMessages, {
      model: 'm',
      input: ['x', ...output, { type: 'function_call_output', call_id: 'toolu_1', output: 'sunny' }].map((item) =>
        typeof item === 'string' ? { role: 'user', content: item } : item,
      ),
    }) as { messages: unknown[] }
    expect(next.messages[1]).toEqual({ role: 'assistant', content: CLAUDE.content })
  })

  it('carries Claude’s thinking to a Gemini client in a thought signature, and sends it back to Claude as it was', () => {
    const candidates = answer(geminiToMessages, GEMINI_REQUEST, CLAUDE).candidates as { content: Record<string, unknown> }[]
    const content = candidates[0]?.content
    expect(content).toEqual({
      role: 'model',
      parts: [
        {
          text: 'Checking.',
          thoughtSignature: carry({
            reasoning: [{ type: 'reasoning', text: 'Weather first.', signature: SIGNATURE, redacted: false }],
            signature: undefined,
          }),
        },
        { functionCall: { id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } } },
      ],
    })
    const next = upstreamBody(geminiToMessages, {
      contents: [
        ...GEMINI_REQUEST.contents,
        content,
        { role: 'user', parts: [{ functionResponse: { id: 'toolu_1', name: 'get_weather', response: { output: 'sunny' } } }] },
      ],
    }) as { messages: unknown[] }
    expect(next.messages[1]).toEqual({ role: 'assistant', content: CLAUDE.content })
  })

  it('gives a redacted thinking block back as it came', () => {
    const redacted = { ...CLAUDE, content: [{ type: 'redacted_thinking', data: 'EmwKAhgB' }, CLAUDE.content[2]] }
    const message = (answer(chatToMessages, CHAT_REQUEST, redacted) as { choices: { message: Record<string, unknown> }[] }).choices[0]
      ?.message
    const next = upstreamBody(chatToMessages, { model: 'm', messages: [...CHAT_REQUEST.messages, message] }) as { messages: unknown[] }
    expect(next.messages[1]).toEqual({ role: 'assistant', content: redacted.content })
  })

  it('gives another format’s client Anthropic’s error message, its status’s type', () => {
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: 'req_1' }
    expect(chatToMessages.error(529, Buffer.from(JSON.stringify(error)))).toEqual({
      error: { message: 'Overloaded', type: 'api_error', param: null, code: 'overloaded_error' },
    })
    expect(
      geminiToMessages.error(429, Buffer.from(JSON.stringify({ ...error, error: { type: 'rate_limit_error', message: 'slow down' } }))),
    ).toEqual({
      error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' },
    })
  })
})

describe('another format’s answer for a Messages client', () => {
  const CHAT_ANSWER = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Hi.',
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 10,
      total_tokens: 110,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 4 },
    },
  }

  it('is a message: its id, text and tool use, the stop reason, and usage with the cache read taken out of the input', () => {
    expect(answer(messagesToChat, MESSAGES_REQUEST, CHAT_ANSWER)).toEqual({
      id: '1',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o',
      content: [
        { type: 'text', text: 'Hi.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 }, caller: { type: 'direct' } },
      ],
      // Every member the Anthropic SDK's types require, what no chat answer says null.
      container: null,
      diagnostics: null,
      stop_reason: 'tool_use',
      stop_details: null,
      stop_sequence: null,
      usage: {
        input_tokens: 40,
        cache_creation: null,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: 60,
        output_tokens: 10,
        output_tokens_details: { thinking_tokens: 4 },
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
        speed: null,
      },
    })
  })

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
  ])('stops a chat %s as %s', (finish, stop) => {
    const body = { ...CHAT_ANSWER, choices: [{ ...CHAT_ANSWER.choices[0], finish_reason: finish }] }
    expect(answer(messagesToChat, MESSAGES_REQUEST, body)).toMatchObject({ stop_reason: stop, stop_sequence: null })
  })

  it('details a refusal as the API does: a refusal with no category or explanation known', () => {
    const body = { ...CHAT_ANSWER, choices: [{ ...CHAT_ANSWER.choices[0], finish_reason: 'content_filter' }] }
    expect(answer(messagesToChat, MESSAGES_REQUEST, body).stop_details).toEqual({ type: 'refusal', category: null, explanation: null })
  })

  it('puts a Gemini call’s thought signature in a thinking block of its own before the call, for the client to send back', () => {
    const body = answer(messagesToGemini, MESSAGES_REQUEST, {
      candidates: [
        {
          index: 0,
          content: { role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'c2ln' }] },
          finishReason: 'STOP',
        },
      ],
      responseId: 'r1',
      modelVersion: 'gemini-3-pro',
    })
    expect(body.content).toEqual([
      { type: 'thinking', thinking: '', signature: carry({ reasoning: [], signature: 'c2ln' }) },
      { type: 'tool_use', id: 'call_r1_0_0', name: 'f', input: {}, caller: { type: 'direct' } },
    ])
    expect(body).toMatchObject({ id: 'r1', stop_reason: 'tool_use', usage: { input_tokens: 0, output_tokens: 0 } })
  })

  it('answers a refused Gemini prompt with an empty message stopped for refusal', () => {
    const body = answer(messagesToGemini, MESSAGES_REQUEST, {
      promptFeedback: { blockReason: 'SAFETY' },
      usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 },
    })
    expect(body).toMatchObject({ id: 'msg_req1', model: 'client-model', content: [], stop_reason: 'refusal' })
  })

  it('gives the upstream’s error in Anthropic’s shape, its type from the status, with the call’s request id', () => {
    const error = { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }
    expect(messagesToChat.error(429, Buffer.from(JSON.stringify(error)), 'req1')).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Rate limit reached' },
      request_id: 'req1',
    })
    expect(messagesToGemini.error(503, Buffer.from('upstream down'))).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'upstream down' },
      request_id: null,
    })
  })
})
