// OpenAI's chat-completion stream rules: the role once per choice, the usage only when the client asked (yet always
// counted), an event that cannot be read, and a stream broken off: one error event and no [DONE].
import { describe, expect, it } from 'vitest'
import { sseEvent } from '../../../src/sse/write.js'
import { chatFrame, chatRequest, chatToGemini, frames, GEMINI_TEXT, geminiRequest, geminiToChat, planOf, run } from './helpers.js'

describe('a stream written as chat chunks', () => {
  it('sends the role once, text deltas, the finish, the usage when asked, then [DONE]', () => {
    const before = { usage: null }
    expect(run(chatToGemini, chatRequest(true), GEMINI_TEXT)).toEqual([
      chatFrame([{ index: 0, delta: { role: 'assistant', content: 'The' }, finish_reason: null }], before),
      chatFrame([{ index: 0, delta: { content: ' sky is blue.' }, finish_reason: null }], before),
      chatFrame([{ index: 0, delta: {}, finish_reason: 'stop' }], before),
      chatFrame([], {
        usage: { prompt_tokens: 8, completion_tokens: 8, total_tokens: 16, completion_tokens_details: { reasoning_tokens: 3 } },
      }),
      '[DONE]',
    ])
  })

  it('asked for usage, puts `usage: null` on every chunk before the usage chunk, tool calls and finishes included', () => {
    const call = { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } }
    const events = [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Checking.' }, call] }, index: 0 }] },
      {
        candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: GEMINI_TEXT.at(-1)?.usageMetadata,
      },
    ]
    const chunks = run(chatToGemini, chatRequest(true), events).filter((frame) => frame !== '[DONE]') as Record<string, unknown>[]
    expect(chunks.length).toBeGreaterThan(2)
    for (const chunk of chunks.slice(0, -1)) expect(chunk).toHaveProperty('usage', null)
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 8, completion_tokens: 8 } })
  })

  it('sends no usage chunk unless asked, yet counts the usage for the gateway', () => {
    const translator = chatToGemini
    const stream = translator.stream(planOf(translator, chatRequest(false), true))
    let out = ''
    for (const event of GEMINI_TEXT) out += stream.write(sseEvent(JSON.stringify(event)))
    const all = frames(out + stream.end())
    expect(all.at(-1)).toBe('[DONE]')
    // Not asked, no chunk carries a `usage` member at all, not even null.
    expect(all.some((frame) => typeof frame === 'object' && frame !== null && 'usage' in frame)).toBe(false)
    expect(stream.usage()).toEqual({
      input_tokens: 8,
      output_tokens: 8,
      total_tokens: 16,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 3,
    })
  })

  it('reports an event it cannot read', () => {
    expect(run(chatToGemini, chatRequest(false), ['not json'])[0]).toMatchObject({ error: { type: 'api_error' } })
  })

  it('ends with one error event in the client format and no [DONE]', () => {
    const toChat = chatToGemini.stream(planOf(chatToGemini, chatRequest(true), true))
    const text = toChat.write(sseEvent(JSON.stringify(GEMINI_TEXT[0]))) + toChat.fail(502, 'The upstream stream broke off.')
    expect(frames(text).slice(1)).toEqual([
      { error: { message: 'The upstream stream broke off.', type: 'api_error', param: null, code: null } },
    ])
    const toGemini = geminiToChat.stream(planOf(geminiToChat, geminiRequest, true))
    expect(frames(toGemini.fail(502, 'The upstream stream broke off.'))).toEqual([
      { error: { code: 503, message: 'The upstream stream broke off.', status: 'UNAVAILABLE' } },
    ])
  })
})
