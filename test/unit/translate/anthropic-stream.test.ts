// The Messages stream rules: events written for a Messages client (named, in order, each block opened, filled and
// stopped with its index, the usage at the end when the upstream gives it late), and a Messages stream read for
// another format's client (thinking, signatures, input usage from the start merged with the counts of the end).
import { describe, expect, it } from 'vitest'
import { anthropic, gemini, openai, translatorFor } from '../../../src/dialects/index.js'
import { carry } from '../../../src/translate/carry.js'
import type { Translator } from '../../../src/translate/index.js'
import { frames, planOf, typedFrames } from './helpers.js'

const messagesToChat = translatorFor(anthropic, openai, 'messages')!
const messagesToGemini = translatorFor(anthropic, gemini, 'messages')!
const chatToMessages = translatorFor(openai, anthropic, 'chat.completions')!
const responsesToMessages = translatorFor(openai, anthropic, 'responses')!
const geminiToMessages = translatorFor(gemini, anthropic, 'generateContent')!

const MESSAGES_REQUEST = { model: 'claude', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }], stream: true }

/** The client's SSE text for upstream events (each its SSE `data`), written one at a time. */
function stream(translator: Translator, request: Record<string, unknown>, events: unknown[]): string {
  const translation = translator.stream(planOf(translator, request, true))
  let out = ''
  for (const event of events) out += translation.event(typeof event === 'string' ? event : JSON.stringify(event))
  return out + translation.end()
}

const chunk = (delta: object, finish: string | null = null) => ({
  id: 'chatcmpl-9',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, delta, finish_reason: finish }],
})

describe('a stream written for a Messages client', () => {
  it('starts the message with the upstream’s first chunk, before any text: a chat upstream’s first says only its role', () => {
    const translation = messagesToChat.stream(planOf(messagesToChat, MESSAGES_REQUEST, true))
    const first = typedFrames(translation.event(JSON.stringify(chunk({ role: 'assistant', content: '' }))))
    expect(first.map(({ data }) => data.type)).toEqual(['message_start'])
  })

  it('names each event, numbers each block, and puts usage reported at the end in message_delta', () => {
    const out = stream(messagesToChat, MESSAGES_REQUEST, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
      {
        ...chunk({}),
        choices: [],
        usage: { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } },
      },
      '[DONE]',
    ])
    const events = typedFrames(out)
    for (const { event, data } of events) expect(event).toBe(data.type)
    expect(events.map(({ data }) => data)).toEqual([
      {
        type: 'message_start',
        message: {
          id: '9',
          type: 'message',
          role: 'assistant',
          model: 'gpt-4o',
          content: [],
          // Every member the Anthropic SDK's types require, what no chat stream says null.
          container: null,
          diagnostics: null,
          stop_reason: null,
          stop_details: null,
          stop_sequence: null,
          usage: {
            input_tokens: 0,
            cache_creation: null,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
            output_tokens: 0,
            output_tokens_details: null,
            server_tool_use: null,
            service_tier: null,
            inference_geo: null,
            speed: null,
          },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_1', name: 'f', input: {}, caller: { type: 'direct' } },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { container: null, stop_reason: 'tool_use', stop_details: null, stop_sequence: null },
        usage: {
          input_tokens: 30,
          cache_creation_input_tokens: null,
          cache_read_input_tokens: 20,
          output_tokens: 7,
          output_tokens_details: null,
          server_tool_use: null,
        },
      },
      { type: 'message_stop' },
    ])
  })

  it('starts with the input usage an upstream gives early, and puts a Gemini signature in a thinking block before its call', () => {
    const out = stream(messagesToGemini, MESSAGES_REQUEST, [
      {
        candidates: [
          {
            index: 0,
            content: { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'c2ln' }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3, totalTokenCount: 15 },
        responseId: 'r1',
        modelVersion: 'gemini-3-pro',
      },
    ])
    const events = typedFrames(out).map(({ data }) => data)
    expect(events[0]).toMatchObject({
      type: 'message_start',
      message: { id: 'r1', model: 'gemini-3-pro', usage: { input_tokens: 12, output_tokens: 0 } },
    })
    expect(events.slice(1, 7)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: carry({ reasoning: [], signature: 'c2ln' }) } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_r1_0_0', name: 'f', input: {}, caller: { type: 'direct' } },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
      { type: 'content_block_stop', index: 1 },
    ])
    expect(events.at(-2)).toMatchObject({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use' },
      usage: { input_tokens: 12, output_tokens: 3 },
    })
  })

  it('writes reasoning another format carried back as Claude wrote it, a redacted block whole', () => {
    const redacted = { type: 'reasoning', text: '', signature: 'EmwKAhgB', redacted: true } as const
    const signed = { type: 'reasoning', text: 'Hmm.', signature: 'EqQB', redacted: false } as const
    const call = { index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } }
    const extra = { google: { thought_signature: carry({ reasoning: [redacted, signed], signature: undefined }) } }
    const events = typedFrames(
      stream(messagesToChat, MESSAGES_REQUEST, [chunk({ tool_calls: [{ ...call, extra_content: extra }] }, 'tool_calls')]),
    )
    expect(events.slice(1, 10).map(({ data }) => data)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 'EqQB' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {}, caller: { type: 'direct' } },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 2 },
    ])
  })

  it('ends with one error event, nothing after it, when the upstream breaks off, its request id the call’s', () => {
    const plan = planOf(messagesToChat, MESSAGES_REQUEST, true)
    const translation = messagesToChat.stream(plan)
    const out = translation.event(JSON.stringify(chunk({ content: 'Hi' }))) + translation.fail(502, 'The upstream broke off.')
    expect(typedFrames(out).at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'The upstream broke off.' }, request_id: plan.requestId },
    })
    const errored = stream(messagesToChat, MESSAGES_REQUEST, [
      chunk({ content: 'Hi' }),
      { error: { message: 'quota', type: 'x', code: null, param: null } },
    ])
    expect(typedFrames(errored).map(({ event }) => event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error'])
  })
})

/** A Messages stream: Claude thinks, speaks and calls a tool, with the usage of the start and the counts of the end. */
const CLAUDE_STREAM = [
  {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 1 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'ping' },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Weather ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'first.' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking.' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
  { type: 'content_block_stop', index: 2 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } },
  { type: 'message_stop' },
]
const THINKING = { type: 'reasoning', text: 'Weather first.', signature: 'EqQB', redacted: false } as const

describe('a Messages stream read for another format’s client', () => {
  it('gives a chat client the text and the call (the thinking packed on it), and the usage with the start’s input counts', () => {
    const chunks = frames(
      stream(
        chatToMessages,
        { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: { include_usage: true } },
        CLAUDE_STREAM,
      ),
    )
    expect(JSON.stringify(chunks)).not.toContain('Weather')
    expect(chunks).toContainEqual(
      expect.objectContaining({ choices: [expect.objectContaining({ delta: { role: 'assistant', content: 'Checking.' } })] }),
    )
    expect(chunks).toContainEqual(
      expect.objectContaining({
        choices: [
          expect.objectContaining({
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: 'toolu_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '' },
                  extra_content: { google: { thought_signature: carry({ reasoning: [THINKING], signature: undefined }) } },
                },
              ],
            },
          }),
        ],
      }),
    )
    expect(chunks.at(-2)).toMatchObject({
      usage: { prompt_tokens: 1110, completion_tokens: 20, total_tokens: 1130, prompt_tokens_details: { cached_tokens: 1000 } },
    })
    expect(chunks.at(-1)).toBe('[DONE]')
  })

  it('gives a Responses client the thinking as a reasoning item, and the cache write count in response.completed', () => {
    const events = typedFrames(stream(responsesToMessages, { model: 'm', input: 'x', stream: true }, CLAUDE_STREAM))
    const added = events
      .filter(({ event }) => event === 'response.output_item.added')
      .map(({ data }) => (data.item as { type: string }).type)
    expect(added).toEqual(['reasoning', 'message', 'function_call'])
    expect(events.at(-1)).toMatchObject({
      event: 'response.completed',
      data: {
        response: {
          usage: { input_tokens: 1110, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 100 }, output_tokens: 20 },
        },
      },
    })
  })

  it('gives a Gemini client the thinking in the thought signature of the part after it', () => {
    const responses = frames(stream(geminiToMessages, { contents: [{ parts: [{ text: 'x' }] }] }, CLAUDE_STREAM)) as {
      candidates: { content: { parts: unknown[] } }[]
    }[]
    const parts = responses.flatMap((response) => response.candidates.flatMap((candidate) => candidate.content.parts))
    expect(parts).toEqual([
      { text: 'Checking.', thoughtSignature: carry({ reasoning: [THINKING], signature: undefined }) },
      { functionCall: { id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } } },
    ])
  })

  it('gives every client an error event of the upstream with its message', () => {
    const broken = [CLAUDE_STREAM[0], { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]
    expect(stream(chatToMessages, { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }, broken)).toContain(
      '"message":"Overloaded","type":"api_error"',
    )
    expect(stream(geminiToMessages, { contents: [{ parts: [{ text: 'x' }] }] }, broken)).toContain(
      // Google's status names pair 529 with none: the nearest, 503 UNAVAILABLE, names it.
      '{"error":{"code":503,"message":"Overloaded","status":"UNAVAILABLE"}',
    )
  })
})
