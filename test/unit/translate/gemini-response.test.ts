// Gemini's answer rules: how a generate-content answer is read (usage, call ids and thought signatures, finish
// reasons, candidates), how an answer is written as one, and the Google error a Gemini client gets.
import { describe, expect, it } from 'vitest'
import { gemini, openai } from '../../../src/dialects/index.js'
import { chatPlan, chatToGemini, forChat, forGemini, geminiToChat } from './helpers.js'

describe('a generate-content answer read', () => {
  it('maps the documented text answer, usage by the rule (thoughts count as output)', () => {
    expect(
      forChat({
        candidates: [{ content: { parts: [{ text: 'AI learns patterns from data.' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: 8,
          candidatesTokenCount: 12,
          totalTokenCount: 50,
          promptTokensDetails: [{ modality: 'TEXT', tokenCount: 8 }],
          thoughtsTokenCount: 30,
        },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'mAitaLmkHPPlz7IPvtfUqQ8',
      }),
    ).toEqual({
      id: 'chatcmpl-mAitaLmkHPPlz7IPvtfUqQ8',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-2.5-flash',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'AI learns patterns from data.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 8, completion_tokens: 42, total_tokens: 50, completion_tokens_details: { reasoning_tokens: 30 } },
    })
  })

  it('counts tool-use prompt tokens as input and reports cached tokens', () => {
    const out = forChat({
      candidates: [{ content: { parts: [{ text: 'x' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: 100,
        toolUsePromptTokenCount: 20,
        cachedContentTokenCount: 64,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 7,
        totalTokenCount: 132,
      },
    })
    expect(out).toMatchObject({
      usage: {
        prompt_tokens: 120,
        completion_tokens: 12,
        total_tokens: 132,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 7 },
      },
    })
  })

  it('maps function calls to tool calls with stable ids, the signature kept, STOP read as tool_calls', () => {
    const body = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'Setting the lights.', thought: true },
              { functionCall: { name: 'set_light_values', args: { color_temp: 'warm', brightness: 25 } }, thoughtSignature: 'CiQB' },
              { functionCall: { id: 'fc-2', name: 'set_light_values', args: { brightness: 0, color_temp: 'cool' } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    }
    const out = forChat(body)
    expect(out).toMatchObject({
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_r1_0_0',
                type: 'function',
                function: { name: 'set_light_values', arguments: '{"color_temp":"warm","brightness":25}' },
                extra_content: { google: { thought_signature: 'CiQB' } },
              },
              { id: 'fc-2', type: 'function', function: { name: 'set_light_values', arguments: '{"brightness":0,"color_temp":"cool"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    })
    expect(forChat(body)).toEqual(out)
  })

  it('maps several candidates to choices', () => {
    const out = forChat({
      candidates: [
        { content: { parts: [{ text: 'A' }], role: 'model' }, finishReason: 'STOP', index: 0 },
        { content: { parts: [{ text: 'B' }], role: 'model' }, finishReason: 'MAX_TOKENS', index: 1 },
      ],
    })
    expect(out).toMatchObject({
      choices: [
        { index: 0, message: { content: 'A' }, finish_reason: 'stop' },
        { index: 1, message: { content: 'B' }, finish_reason: 'length' },
      ],
    })
  })

  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['LANGUAGE', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'],
    ['OTHER', 'stop'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['UNEXPECTED_TOOL_CALL', 'stop'],
    ['TOO_MANY_TOOL_CALLS', 'stop'],
    ['MISSING_THOUGHT_SIGNATURE', 'stop'],
    ['FINISH_REASON_UNSPECIFIED', 'stop'],
  ])('maps finishReason %s to %s', (reason, finish) => {
    const out = forChat({ candidates: [{ content: { parts: [{ text: 'x' }], role: 'model' }, finishReason: reason, index: 0 }] })
    expect(out).toMatchObject({ choices: [{ finish_reason: finish }] })
  })

  it('fails on a body that is not a response', () => {
    expect(chatToGemini.response([], chatPlan)).toMatchObject({ ok: false, field: '' })
    expect(chatToGemini.response({ candidates: 'x' }, chatPlan)).toMatchObject({ ok: false, field: 'candidates' })
  })
})

describe('an answer written as generate-content', () => {
  it('maps the documented answer', () => {
    expect(
      forGemini({
        id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
        object: 'chat.completion',
        created: 1741569952,
        model: 'gpt-4.1-2025-04-14',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hello! How can I assist you today?', refusal: null, annotations: [] },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: 19,
          completion_tokens: 10,
          total_tokens: 29,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        },
        service_tier: 'default',
      }),
    ).toEqual({
      candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Hello! How can I assist you today?' }] }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: 19,
        candidatesTokenCount: 10,
        totalTokenCount: 29,
        cachedContentTokenCount: 0,
        thoughtsTokenCount: 0,
      },
      modelVersion: 'gpt-4.1-2025-04-14',
      responseId: 'B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    })
  })

  it('takes reasoning tokens out of the candidates count, so the usage rule gives the same output', () => {
    const out = forGemini({
      choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 50, total_tokens: 60, completion_tokens_details: { reasoning_tokens: 40 } },
    })
    expect(out).toMatchObject({
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, thoughtsTokenCount: 40, totalTokenCount: 60 },
    })
    expect(gemini.usage(out)).toEqual(
      openai.usage({ usage: { prompt_tokens: 10, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: 40 } } }),
    )
  })

  it('maps the documented tool call answer, its id kept', () => {
    const out = forGemini({
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: 1699896916,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_abc123',
                type: 'function',
                function: { name: 'get_current_weather', arguments: '{\n"location": "Boston, MA"\n}' },
              },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 },
    })
    expect(out).toEqual({
      candidates: [
        {
          index: 0,
          content: {
            role: 'model',
            parts: [{ functionCall: { id: 'call_abc123', name: 'get_current_weather', args: { location: 'Boston, MA' } } }],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 82, candidatesTokenCount: 17, totalTokenCount: 99 },
      modelVersion: 'gpt-4o-mini',
      responseId: 'abc123',
    })
  })

  it.each([
    ['stop', 'STOP'],
    ['length', 'MAX_TOKENS'],
    ['tool_calls', 'STOP'],
    ['function_call', 'STOP'],
    ['content_filter', 'SAFETY'],
  ])('maps finish_reason %s to %s', (reason, finish) => {
    const out = forGemini({ choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: reason }] })
    expect(out).toMatchObject({ candidates: [{ finishReason: finish }] })
  })

  it('gives a refusal as text', () => {
    const out = forGemini({
      choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: "I can't help with that." }, finish_reason: 'stop' }],
    })
    expect(out).toMatchObject({ candidates: [{ content: { parts: [{ text: "I can't help with that." }] } }] })
  })
})

describe('errors written for a Gemini client', () => {
  it('maps an OpenAI error to a Google error, the status kept by the caller', () => {
    const body = { error: { message: 'Rate limit reached for gpt-4o', type: 'requests', param: null, code: 'rate_limit_exceeded' } }
    expect(geminiToChat.error(429, body)).toEqual({
      error: { code: 429, message: 'Rate limit reached for gpt-4o', status: 'RESOURCE_EXHAUSTED' },
    })
    expect(geminiToChat.error(400, JSON.stringify(body))).toEqual({
      error: { code: 400, message: 'Rate limit reached for gpt-4o', status: 'INVALID_ARGUMENT' },
    })
  })
})
