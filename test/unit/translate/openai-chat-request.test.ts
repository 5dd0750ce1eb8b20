// OpenAI's chat-completions request rules: how a chat request is read (system and developer messages, the stream
// usage the client asks for, what is refused), and how a request is written for a chat upstream (the model in the
// body, content parts, reasoning effort, stream usage).
import { describe, expect, it } from 'vitest'
import { callInfo, chatToGemini, geminiToChat, planOf, refusedField, upstreamBody, WEATHER_TOOL } from './helpers.js'

describe('a chat request read', () => {
  it('maps a developer message to systemInstruction and the user turn to contents', () => {
    expect(
      upstreamBody(chatToGemini, {
        model: 'gpt-4o',
        messages: [
          { role: 'developer', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'Hello!' },
        ],
      }),
    ).toEqual({
      systemInstruction: { parts: [{ text: 'You are a helpful assistant.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hello!' }] }],
    })
  })

  it('maps leading system and developer messages, in order, as parts of one instruction', () => {
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'One.' }] },
        { role: 'developer', content: 'Two.' },
        { role: 'user', content: 'Hi' },
      ],
    })
    expect(body).toMatchObject({ systemInstruction: { parts: [{ text: 'One.' }, { text: 'Two.' }] } })
  })

  it('keeps the client asking for stream usage in the plan, not in the Gemini body', () => {
    const fields = { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: { include_usage: true } }
    expect(planOf(chatToGemini, fields, true)).toEqual({ ...callInfo(true), includeUsage: true, request: fields })
    expect(upstreamBody(chatToGemini, fields, true)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] })
    expect(planOf(chatToGemini, { ...fields, stream_options: undefined }, true).includeUsage).toBe(false)
  })

  const user = [{ role: 'user', content: 'x' }]

  it.each([
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['parallel_tool_calls', { parallel_tool_calls: false, tools: [WEATHER_TOOL] }],
    ['modalities', { modalities: ['text', 'audio'] }],
    ['reasoning_effort', { reasoning_effort: 'maximal' }],
    ['max_tokens', { max_tokens: 10, max_completion_tokens: 20 }],
    ['stream_options.chunk_size', { stream_options: { include_usage: true, chunk_size: 2 } }],
    ['tools[0].type', { tools: [{ type: 'custom', custom: { name: 'x' } }] }],
    [
      'tools[1].function.strict',
      {
        tools: [
          { type: 'function', function: { name: 'a', strict: true } },
          { type: 'function', function: { name: 'b' } },
        ],
      },
    ],
    [
      'tool_choice.allowed_tools.mode',
      { tools: [WEATHER_TOOL], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } },
    ],
    ['response_format.type', { response_format: { type: 'grammar' } }],
  ])('refuses %s', (field, extra) => {
    expect(refusedField(chatToGemini, { model: 'm', messages: user, ...extra })).toBe(field)
  })

  it('drops the fields that only hint the provider, whatever their value, and names them in the plan', () => {
    const hints = {
      store: true,
      metadata: { a: '1' },
      user: 'u-1',
      safety_identifier: 's',
      prompt_cache_key: 'k',
      prompt_cache_retention: '24h',
      service_tier: 'flex',
    }
    const fields = { model: 'm', messages: user, ...hints }
    expect(upstreamBody(chatToGemini, fields)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] })
    expect(planOf(chatToGemini, fields).dropped).toEqual(Object.keys(hints))
    expect(planOf(chatToGemini, { model: 'm', messages: user }).dropped).toBeUndefined()
  })

  it('keeps a system message given mid-conversation where it stands: Gemini hears it as the user', () => {
    const messages = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'y' },
      { role: 'developer', content: 'late' },
    ]
    expect(upstreamBody(chatToGemini, { model: 'm', messages })).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ text: 'y' }] },
        { role: 'user', parts: [{ text: 'late' }] },
      ],
    })
  })

  it.each([
    ['messages[0].name', [{ role: 'user', content: 'x', name: 'alice' }]],
    ['messages[0].role', [{ role: 'function', name: 'f', content: 'x' }]],
    ['messages[0].role', [{ role: 'constructor', content: 'x' }]],
    ['messages[0].tool_call_id', [{ role: 'tool', tool_call_id: 'call_x', content: 'x' }]],
    [
      'messages[0].content[0].image_url.detail',
      [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'high' } }] }],
    ],
    [
      'messages[0].content[0].image_url.url',
      [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AA==' } }] }],
    ],
    ['messages[0].content[0].file.file_id', [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }]],
    [
      'messages[0].content[0].input_audio.format',
      [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'flac' } }] }],
    ],
    [
      'messages[0].tool_calls[0].function.arguments',
      [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }],
    ],
    ['messages[0].audio', [{ role: 'assistant', content: null, audio: { id: 'audio_abc' } }]],
  ])('refuses %s', (field, messages) => {
    expect(refusedField(chatToGemini, { model: 'm', messages })).toBe(field)
  })
})

describe('a request written for a chat upstream', () => {
  it('maps a text prompt, the model going into the body', () => {
    expect(upstreamBody(geminiToChat, { contents: [{ parts: [{ text: 'Explain how AI works in a few words' }] }] })).toEqual({
      model: 'upstream-model',
      messages: [{ role: 'user', content: 'Explain how AI works in a few words' }],
    })
  })

  it('maps inline images to data URLs and public file URLs to image URLs', () => {
    expect(
      upstreamBody(geminiToChat, {
        contents: [
          {
            parts: [
              { inline_data: { mime_type: 'image/jpeg', data: '/9j/4AAQ' } },
              { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } },
              { inlineData: { mimeType: 'audio/mp3', data: 'SUQz' } },
              { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
              { text: 'Caption this image.' },
            ],
          },
        ],
      }),
    ).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'document.pdf' } },
            { type: 'text', text: 'Caption this image.' },
          ],
        },
      ],
    })
  })

  it.each([
    [{ thinkingBudget: 0 }, 'none'],
    [{ thinkingBudget: 8192 }, 'medium'],
    [{ thinkingBudget: 30000 }, 'high'],
    [{ thinkingLevel: 'HIGH' }, 'high'],
    [{ thinkingLevel: 'low' }, 'low'],
  ])('maps thinkingConfig %j to reasoning_effort %s', (thinking, effort) => {
    const body = upstreamBody(geminiToChat, { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig: thinking } })
    expect(body).toMatchObject({ reasoning_effort: effort })
  })

  it('leaves reasoning to the model when the budget is dynamic', () => {
    const body = upstreamBody(geminiToChat, {
      contents: [{ parts: [{ text: 'x' }] }],
      generationConfig: { thinkingConfig: { thinkingBudget: -1 } },
    })
    expect(body).not.toHaveProperty('reasoning_effort')
  })

  it('asks a chat upstream for usage in a stream, whatever the client said', () => {
    const fields = { contents: [{ parts: [{ text: 'x' }] }] }
    expect(upstreamBody(geminiToChat, fields, true)).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    expect(planOf(geminiToChat, fields, true)).toEqual({ ...callInfo(true), includeUsage: true, request: fields })
  })
})
