// OpenAI's chat-completion answer rules: how an answer is written as a chat completion (a blocked prompt, ids and
// models the upstream did not name), how a chat completion is read, and the OpenAI error a chat client gets.
import { describe, expect, it } from 'vitest'
import { chatPlan, chatToGemini, forChat, geminiPlan, geminiToChat } from './helpers.js'

describe('an answer written as a chat completion', () => {
  it('answers a blocked prompt with one filtered choice', () => {
    expect(
      forChat({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, modelVersion: 'g' }),
    ).toEqual({
      id: 'chatcmpl-req1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'g',
      choices: [
        { index: 0, message: { role: 'assistant', content: null, refusal: null }, finish_reason: 'content_filter', logprobs: null },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 },
    })
  })

  it('names the request when the upstream names neither id nor model', () => {
    expect(forChat({ candidates: [] })).toMatchObject({ id: 'chatcmpl-req1', model: 'client-model', created: 1_700_000_000, choices: [] })
  })
})

describe('a chat completion read', () => {
  it('fails on tool call arguments that are not a JSON object', () => {
    const body = {
      choices: [
        {
          index: 0,
          message: { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] },
        },
      ],
    }
    expect(geminiToChat.response(body, geminiPlan)).toMatchObject({
      ok: false,
      field: 'choices[0].message.tool_calls[0].function.arguments',
    })
  })
})

describe('errors written for a chat client', () => {
  it('maps a Google error to an OpenAI error', () => {
    const body = {
      error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [] },
    }
    expect(chatToGemini.error(400, body)).toEqual({
      error: {
        message: 'API key not valid. Please pass a valid API key.',
        type: 'invalid_request_error',
        param: null,
        code: 'INVALID_ARGUMENT',
      },
    })
    expect(chatToGemini.error(503, { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })).toEqual({
      error: { message: 'The model is overloaded.', type: 'api_error', param: null, code: 'UNAVAILABLE' },
    })
    expect(chatToGemini.error(429, [{ error: { code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }])).toMatchObject({
      error: { type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED' },
    })
  })

  it('carries the text of an error body that is not JSON', () => {
    expect(chatToGemini.error(502, '<html>Bad Gateway</html>')).toEqual({
      error: { message: '<html>Bad Gateway</html>', type: 'api_error', param: null, code: null },
    })
    expect(geminiToChat.error(500, '')).toEqual({ error: { code: 500, message: 'The upstream model failed.', status: 'INTERNAL' } })
  })
})

describe('bodies as the pipeline holds them', () => {
  it('takes answers and errors as bytes', () => {
    const body = Buffer.from(
      JSON.stringify({ candidates: [{ content: { parts: [{ text: 'hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }] }),
    )
    expect(forChat(body)).toMatchObject({ choices: [{ message: { content: 'hi' } }] })
    expect(chatToGemini.response(Buffer.from('not json'), chatPlan)).toMatchObject({ ok: false, field: '' })
    expect(chatToGemini.error(404, Buffer.from('{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}'))).toEqual({
      error: { message: 'models/x is not found', type: 'not_found_error', param: null, code: 'NOT_FOUND' },
    })
  })
})
