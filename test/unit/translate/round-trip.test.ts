import { describe, expect, it } from 'vitest'
import { chatToGemini, geminiToChat, ok, planOf, upstreamBody } from './helpers.js'

/** A chat request after chat → hub → Gemini → hub → chat. */
const chatRoundTrip = (fields: Record<string, unknown>) =>
  upstreamBody(geminiToChat, upstreamBody(chatToGemini, fields) as Record<string, unknown>)
/** A Gemini request after Gemini → hub → chat → hub → Gemini. */
const geminiRoundTrip = (fields: Record<string, unknown>) =>
  upstreamBody(chatToGemini, upstreamBody(geminiToChat, fields) as Record<string, unknown>)

const CHAT_REQUEST = {
  model: 'upstream-model',
  messages: [
    { role: 'system', content: 'You are a weather bot.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is the weather here?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        { type: 'image_url', image_url: { url: 'https://example.com/sky.jpg' } },
      ],
    },
    {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    { role: 'tool', tool_call_id: 'call_2', content: '{"time":"12:00"}' },
    { role: 'user', content: 'Thanks!' },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather by city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' }, days: { type: 'array', items: { type: 'integer' } } },
          required: ['city'],
        },
      },
    },
    {
      type: 'function',
      function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: ['string', 'null'] } } } },
    },
  ],
  tool_choice: { type: 'function', function: { name: 'get_weather' } },
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'response', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } },
  },
  temperature: 0.7,
  top_p: 0.9,
  max_completion_tokens: 256,
  stop: ['END'],
  n: 1,
  seed: 3,
  presence_penalty: 0.1,
  frequency_penalty: 0.2,
  reasoning_effort: 'high',
}

const GEMINI_REQUEST = {
  systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Be kind.' }] },
  contents: [
    { role: 'user', parts: [{ text: 'Turn the lights down' }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }] },
    { role: 'model', parts: [{ text: 'Sure.' }, { functionCall: { id: 'call_x', name: 'set_light', args: { brightness: 25 } } }] },
    { role: 'user', parts: [{ functionResponse: { id: 'call_x', name: 'set_light', response: { ok: true } } }] },
  ],
  tools: [
    {
      functionDeclarations: [
        {
          name: 'set_light',
          description: 'Sets the light.',
          parameters: { type: 'OBJECT', properties: { brightness: { type: 'INTEGER', nullable: true } }, required: ['brightness'] },
        },
      ],
    },
  ],
  toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['set_light'] } },
  generationConfig: {
    temperature: 0.5,
    topP: 0.8,
    maxOutputTokens: 100,
    stopSequences: ['x'],
    candidateCount: 2,
    seed: 1,
    presencePenalty: 0.3,
    frequencyPenalty: 0.4,
    responseMimeType: 'application/json',
    thinkingConfig: { thinkingBudget: 24576 },
  },
}

describe('round trips keep what both formats can express', () => {
  it('chat → Gemini → chat', () => {
    expect(chatRoundTrip(CHAT_REQUEST)).toEqual(CHAT_REQUEST)
  })

  it('Gemini → chat → Gemini', () => {
    expect(geminiRoundTrip(GEMINI_REQUEST)).toEqual(GEMINI_REQUEST)
  })

  it('a chat answer with tool calls and usage, through a Gemini client and back', () => {
    const completion = {
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Checking.',
            refusal: null,
            tool_calls: [
              { id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Boston, MA"}' } },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 82,
        completion_tokens: 17,
        total_tokens: 99,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 4 },
      },
    }
    const asGemini = ok(geminiToChat.response(completion, planOf(geminiToChat, { contents: [{ parts: [{ text: 'x' }] }] })))
    const back = ok(chatToGemini.response(asGemini, planOf(chatToGemini, { model: 'm', messages: [{ role: 'user', content: 'x' }] })))
    expect(back).toEqual(completion)
  })

  it('a Gemini answer with a function call and usage, through a chat client and back', () => {
    const response = {
      candidates: [
        {
          index: 0,
          content: {
            role: 'model',
            parts: [
              { text: 'On it.' },
              { functionCall: { id: 'fc1', name: 'set_light', args: { brightness: 25 } }, thoughtSignature: 'c2ln' },
            ],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: {
        promptTokenCount: 100,
        candidatesTokenCount: 5,
        totalTokenCount: 132,
        cachedContentTokenCount: 64,
        thoughtsTokenCount: 7,
        toolUsePromptTokenCount: 20,
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    }
    const asChat = ok(chatToGemini.response(response, planOf(chatToGemini, { model: 'm', messages: [{ role: 'user', content: 'x' }] })))
    const back = ok(geminiToChat.response(asChat, planOf(geminiToChat, { contents: [{ parts: [{ text: 'x' }] }] })))
    // Chat usage has no tool-use prompt count: it is folded into the prompt, where the usage rule counts it anyway.
    expect(back).toEqual({
      ...response,
      usageMetadata: {
        promptTokenCount: 120,
        candidatesTokenCount: 5,
        totalTokenCount: 132,
        cachedContentTokenCount: 64,
        thoughtsTokenCount: 7,
      },
    })
  })
})
