import { describe, expect, it } from 'vitest'
import { callInfo, chatToGemini, planOf, refusedField, upstreamBody } from './helpers.js'

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_current_weather',
    description: 'Get the current weather in a given location',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['location'],
    },
  },
}

const WEATHER_DECLARATION = {
  name: 'get_current_weather',
  description: 'Get the current weather in a given location',
  parameters: {
    type: 'OBJECT',
    properties: {
      location: { type: 'STRING', description: 'The city and state, e.g. San Francisco, CA' },
      unit: { type: 'STRING', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['location'],
  },
}

describe('chat request to generate-content', () => {
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

  it('maps an image by URL to fileData and a data URL to inlineData', () => {
    const url =
      'https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg'
    expect(
      upstreamBody(chatToGemini, {
        model: 'gpt-4o',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: "What's in this image?" },
              { type: 'image_url', image_url: { url } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
              { type: 'image_url', image_url: { url: 'https://example.com/picture' } },
            ],
          },
        ],
        max_tokens: 300,
      }),
    ).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { text: "What's in this image?" },
            { fileData: { mimeType: 'image/jpeg', fileUri: url } },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { fileUri: 'https://example.com/picture' } },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 300 },
    })
  })

  it('maps audio input and a PDF file to inlineData', () => {
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { filename: 'draconomicon.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          ],
        },
      ],
    })
    expect(body).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
      ],
    })
  })

  it('maps function tools and tool_choice auto', () => {
    expect(
      upstreamBody(chatToGemini, {
        model: 'gpt-4o',
        messages: [{ role: 'user', content: "What's the weather like in Boston today?" }],
        tools: [WEATHER_TOOL],
        tool_choice: 'auto',
      }),
    ).toEqual({
      contents: [{ role: 'user', parts: [{ text: "What's the weather like in Boston today?" }] }],
      tools: [{ functionDeclarations: [WEATHER_DECLARATION] }],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    })
  })

  it.each([
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'get_current_weather' } },
      { mode: 'ANY', allowedFunctionNames: ['get_current_weather'] },
    ],
    [
      {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_current_weather' } }] },
      },
      { mode: 'ANY', allowedFunctionNames: ['get_current_weather'] },
    ],
  ])('maps tool_choice %j', (choice, config) => {
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [WEATHER_TOOL],
      tool_choice: choice,
    })
    expect(body).toMatchObject({ toolConfig: { functionCallingConfig: config } })
  })

  it('asks for validated calls when every tool is strict', () => {
    const strict = { type: 'function', function: { ...WEATHER_TOOL.function, strict: true } }
    const body = upstreamBody(chatToGemini, { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [strict] })
    expect(body).toMatchObject({ toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } } })
  })

  it('leaves out the parameters of a function that takes none, and sends a schema outside the subset as JSON Schema', () => {
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
        { type: 'function', function: { name: 'put', parameters: { type: 'object', additionalProperties: { type: 'string' } } } },
      ],
    })
    expect(body).toMatchObject({
      tools: [
        {
          functionDeclarations: [
            { name: 'now' },
            { name: 'put', parametersJsonSchema: { type: 'object', additionalProperties: { type: 'string' } } },
          ],
        },
      ],
    })
  })

  it('maps tool calls and their results with ids, consecutive results in one turn, names from the calls', () => {
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [
        { role: 'user', content: "What's the weather like in Boston and Paris?" },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_current_weather', arguments: '{"location":"Boston, MA"}' } },
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'get_current_weather', arguments: '{"location":"Paris"}' },
              extra_content: { google: { thought_signature: 'c2ln' } },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":22,"unit":"celsius"}' },
        { role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
        { role: 'user', content: 'Thanks' },
      ],
    })
    expect(body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: "What's the weather like in Boston and Paris?" }] },
        {
          role: 'model',
          parts: [
            { functionCall: { id: 'call_1', name: 'get_current_weather', args: { location: 'Boston, MA' } } },
            { functionCall: { id: 'call_2', name: 'get_current_weather', args: { location: 'Paris' } }, thoughtSignature: 'c2ln' },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_1', name: 'get_current_weather', response: { temperature: 22, unit: 'celsius' } } },
            { functionResponse: { id: 'call_2', name: 'get_current_weather', response: { output: 'sunny' } } },
          ],
        },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
    })
  })

  it('maps json_object and json_schema response formats', () => {
    expect(
      upstreamBody(chatToGemini, { model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } }),
    ).toMatchObject({
      generationConfig: { responseMimeType: 'application/json' },
    })
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [{ role: 'user', content: 'solve 8x + 7 = -23' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'math_response',
          strict: true,
          schema: {
            type: 'object',
            properties: {
              steps: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { explanation: { type: 'string' }, output: { type: 'string' } },
                  required: ['explanation', 'output'],
                  additionalProperties: false,
                },
              },
              final_answer: { type: 'string' },
            },
            required: ['steps', 'final_answer'],
            additionalProperties: false,
          },
        },
      },
    })
    expect(body).toMatchObject({
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT',
          properties: {
            steps: {
              type: 'ARRAY',
              items: {
                type: 'OBJECT',
                properties: { explanation: { type: 'STRING' }, output: { type: 'STRING' } },
                required: ['explanation', 'output'],
              },
            },
            final_answer: { type: 'STRING' },
          },
          required: ['steps', 'final_answer'],
        },
      },
    })
  })

  it('sends a recursive response schema as responseJsonSchema, its description joined', () => {
    const schema = { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } }, description: 'A tree.' }
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'tree', description: 'Answer as a tree.', schema } },
    })
    expect(body).toMatchObject({
      generationConfig: {
        responseMimeType: 'application/json',
        responseJsonSchema: { ...schema, description: 'Answer as a tree.\n\nA tree.' },
      },
    })
  })

  it('maps sampling, length, stop, candidates, seed, penalties and reasoning effort', () => {
    const body = upstreamBody(chatToGemini, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 512,
      stop: 'END',
      n: 2,
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      reasoning_effort: 'medium',
      parallel_tool_calls: true,
      logprobs: false,
      store: false,
      stream: false,
    })
    expect(body).toMatchObject({
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 512,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 42,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        thinkingConfig: { thinkingBudget: 8192 },
      },
    })
  })

  it.each([
    ['none', 0],
    ['minimal', 1024],
    ['low', 1024],
    ['high', 24576],
  ])('maps reasoning_effort %s to a thinking budget of %i', (effort, budget) => {
    const body = upstreamBody(chatToGemini, { model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: effort })
    expect(body).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: budget } } })
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
    ['user', { user: 'u-1' }],
    ['parallel_tool_calls', { parallel_tool_calls: false, tools: [WEATHER_TOOL] }],
    ['modalities', { modalities: ['text', 'audio'] }],
    ['store', { store: true }],
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

  it.each([
    [
      'messages[1].role',
      [
        { role: 'user', content: 'x' },
        { role: 'system', content: 'late' },
      ],
    ],
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
