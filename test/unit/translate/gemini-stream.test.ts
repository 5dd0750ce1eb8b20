// Gemini's stream rules: how a generate-content stream is read (whole calls with stable ids, candidates, streamed
// errors and their status), and how a stream is written as one (a response per event, calls sent whole once their
// arguments are, the finish with the usage last, what is held until the end).
import { describe, expect, it } from 'vitest'
import { chatFrame, chatRequest, chatToGemini, GEMINI_META, GEMINI_TEXT, geminiRequest, geminiToChat, run } from './helpers.js'

const CHUNK = {
  id: 'chatcmpl-123',
  object: 'chat.completion.chunk',
  created: 1694268190,
  model: 'gpt-4o-mini',
  system_fingerprint: 'fp_44709d6fcb',
}
const chunk = (delta: object, finish: string | null = null) => ({
  ...CHUNK,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})
const OPENAI_TEXT = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hello' }),
  chunk({ content: ' there' }),
  chunk({}, 'stop'),
  { ...CHUNK, choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
  '[DONE]',
]

const geminiFrame = (candidates: unknown[], extra: object = {}) => ({
  candidates,
  modelVersion: 'gpt-4o-mini',
  responseId: '123',
  ...extra,
})

describe('a generate-content stream read', () => {
  it('sends each function call as one tool call delta with a stable index and id, finishing with tool_calls', () => {
    const events = [
      {
        candidates: [
          {
            content: {
              parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: 'c2ln' }],
              role: 'model',
            },
            index: 0,
          },
        ],
        ...GEMINI_META,
      },
      {
        candidates: [
          {
            content: { parts: [{ functionCall: { name: 'get_weather', args: { location: 'Tokyo' } } }], role: 'model' },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        ...GEMINI_META,
      },
    ]
    expect(run(chatToGemini, chatRequest(false), events)).toEqual([
      chatFrame([
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [
              {
                index: 0,
                id: 'call_r1_0_0',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
                extra_content: { google: { thought_signature: 'c2ln' } },
              },
            ],
          },
          finish_reason: null,
        },
      ]),
      chatFrame([
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 1, id: 'call_r1_0_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Tokyo"}' } },
            ],
          },
          finish_reason: null,
        },
      ]),
      chatFrame([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
      '[DONE]',
    ])
  })

  it('keeps candidates apart', () => {
    const events = [
      {
        candidates: [
          { content: { parts: [{ text: 'A' }], role: 'model' }, index: 0 },
          { content: { parts: [{ text: 'B' }], role: 'model' }, index: 1, finishReason: 'MAX_TOKENS' },
        ],
        ...GEMINI_META,
      },
    ]
    expect(run(chatToGemini, chatRequest(false), events).slice(0, 3)).toEqual([
      chatFrame([{ index: 0, delta: { role: 'assistant', content: 'A' }, finish_reason: null }]),
      chatFrame([{ index: 1, delta: { role: 'assistant', content: 'B' }, finish_reason: null }]),
      chatFrame([{ index: 1, delta: {}, finish_reason: 'length' }]),
    ])
  })

  it('passes a streamed upstream error on in the client format', () => {
    const events = [GEMINI_TEXT[0], { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } }]
    const out = run(chatToGemini, chatRequest(false), events)
    expect(out[1]).toEqual({ error: { message: 'An internal error has occurred.', type: 'api_error', param: null, code: 'INTERNAL' } })
  })

  it('keeps the status a streamed Google error names', () => {
    const out = run(chatToGemini, chatRequest(false), [{ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }])
    expect(out[0]).toEqual({ error: { message: 'Quota exceeded', type: 'rate_limit_error', param: null, code: 'RESOURCE_EXHAUSTED' } })
  })
})

describe('a stream written as generate-content', () => {
  it('sends one response per text event and the finish with the usage last', () => {
    expect(run(geminiToChat, geminiRequest, OPENAI_TEXT)).toEqual([
      geminiFrame([{ index: 0, content: { role: 'model', parts: [{ text: 'Hello' }] } }]),
      geminiFrame([{ index: 0, content: { role: 'model', parts: [{ text: ' there' }] } }]),
      geminiFrame([{ index: 0, content: { role: 'model', parts: [] }, finishReason: 'STOP' }], {
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 },
      }),
    ])
  })

  it('assembles tool call deltas split over several events into whole function calls', () => {
    const events = [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"loc' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ation":"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_def', type: 'function', function: { name: 'get_weather', arguments: '{"location":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"Tokyo"}' } }] }),
      chunk({}, 'tool_calls'),
      { ...CHUNK, choices: [], usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 } },
      '[DONE]',
    ]
    expect(run(geminiToChat, geminiRequest, events)).toEqual([
      geminiFrame([
        {
          index: 0,
          content: { role: 'model', parts: [{ functionCall: { id: 'call_abc', name: 'get_weather', args: { location: 'Paris' } } }] },
        },
      ]),
      geminiFrame(
        [
          {
            index: 0,
            content: { role: 'model', parts: [{ functionCall: { id: 'call_def', name: 'get_weather', args: { location: 'Tokyo' } } }] },
            finishReason: 'STOP',
          },
        ],
        { usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 20, totalTokenCount: 50 } },
      ),
    ])
  })

  it('sends what is held when the upstream ends without usage or [DONE]', () => {
    const events = [
      chunk({ content: 'Hi' }),
      chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
    ]
    expect(run(geminiToChat, geminiRequest, events)).toEqual([
      geminiFrame([{ index: 0, content: { role: 'model', parts: [{ text: 'Hi' }] } }]),
      geminiFrame([{ index: 0, content: { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'f', args: {} } }] } }]),
    ])
  })

  it('drops a call whose arguments were cut off by the token limit; the finish says why', () => {
    const events = [
      chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }),
      chunk({}, 'length'),
    ]
    expect(run(geminiToChat, geminiRequest, events)).toEqual([
      geminiFrame([{ index: 0, content: { role: 'model', parts: [] }, finishReason: 'MAX_TOKENS' }]),
    ])
  })

  it('passes a streamed upstream error on in the client format', () => {
    const out = run(geminiToChat, geminiRequest, [
      { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } },
    ])
    expect(out).toEqual([{ error: { code: 500, message: 'The server had an error', status: 'INTERNAL' } }])
  })

  it('keeps text, tool calls with their ids, the finish and the usage', () => {
    const events = [
      chunk({ role: 'assistant', content: 'Let me check.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
      {
        ...CHUNK,
        choices: [],
        usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50, completion_tokens_details: { reasoning_tokens: 5 } },
      },
      '[DONE]',
    ]
    const asGemini = run(geminiToChat, geminiRequest, events)
    const back = run(chatToGemini, chatRequest(true), asGemini)
    // Asked for usage, every chunk before the usage chunk carries `usage: null`.
    const frame = (choices: unknown[], extra: object = { usage: null }) => ({
      ...chatFrame(choices, extra),
      id: 'chatcmpl-123',
      model: 'gpt-4o-mini',
    })
    expect(back).toEqual([
      frame([{ index: 0, delta: { role: 'assistant', content: 'Let me check.' }, finish_reason: null }]),
      frame([
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: null,
        },
      ]),
      frame([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
      frame([], {
        usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50, completion_tokens_details: { reasoning_tokens: 5 } },
      }),
      '[DONE]',
    ])
  })
})
