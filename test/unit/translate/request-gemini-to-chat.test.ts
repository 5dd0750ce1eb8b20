import { describe, expect, it } from 'vitest'
import { callInfo, geminiToChat, planOf, refusedField, upstreamBody } from './helpers.js'

const LIGHTS = {
  functionDeclarations: [
    {
      name: 'set_light_values',
      description: 'Sets the brightness and color temperature of a light.',
      parameters: {
        type: 'object',
        properties: {
          brightness: { type: 'integer', description: 'Light level from 0 to 100. Zero is off and 100 is full brightness' },
          color_temp: { type: 'string', enum: ['daylight', 'cool', 'warm'], description: 'Color temperature of the light fixture.' },
        },
        required: ['brightness', 'color_temp'],
      },
    },
  ],
}

const LIGHTS_TOOL = {
  type: 'function',
  function: {
    name: 'set_light_values',
    description: 'Sets the brightness and color temperature of a light.',
    parameters: {
      type: 'object',
      properties: {
        brightness: { type: 'integer', description: 'Light level from 0 to 100. Zero is off and 100 is full brightness' },
        color_temp: { type: 'string', enum: ['daylight', 'cool', 'warm'], description: 'Color temperature of the light fixture.' },
      },
      required: ['brightness', 'color_temp'],
    },
  },
}

describe('generate-content request to chat', () => {
  it('maps a text prompt, the model going into the body', () => {
    expect(upstreamBody(geminiToChat, { contents: [{ parts: [{ text: 'Explain how AI works in a few words' }] }] })).toEqual({
      model: 'upstream-model',
      messages: [{ role: 'user', content: 'Explain how AI works in a few words' }],
    })
  })

  it('reads snake_case field names as the REST documentation writes them', () => {
    expect(
      upstreamBody(geminiToChat, {
        system_instruction: { parts: [{ text: 'You are a cat. Your name is Neko.' }] },
        contents: [{ parts: [{ text: 'Hello there' }] }],
        generation_config: { max_output_tokens: 100, stop_sequences: ['Title'] },
      }),
    ).toEqual({
      model: 'upstream-model',
      messages: [
        { role: 'system', content: 'You are a cat. Your name is Neko.' },
        { role: 'user', content: 'Hello there' },
      ],
      max_completion_tokens: 100,
      stop: ['Title'],
    })
  })

  it('maps a multi-turn chat', () => {
    expect(
      upstreamBody(geminiToChat, {
        contents: [
          { role: 'user', parts: [{ text: 'Hello' }] },
          { role: 'model', parts: [{ text: 'Great to meet you. What would you like to know?' }] },
          { role: 'user', parts: [{ text: 'I have two dogs in my house. How many paws are in my house?' }] },
        ],
      }),
    ).toMatchObject({
      messages: [
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Great to meet you. What would you like to know?' },
        { role: 'user', content: 'I have two dogs in my house. How many paws are in my house?' },
      ],
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

  it('maps function declarations and toolConfig', () => {
    const body = upstreamBody(geminiToChat, {
      contents: [{ role: 'user', parts: [{ text: 'Turn the lights down to a romantic level' }] }],
      tools: [LIGHTS],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['set_light_values'] } },
    })
    expect(body).toMatchObject({ tools: [LIGHTS_TOOL], tool_choice: { type: 'function', function: { name: 'set_light_values' } } })
  })

  it.each([
    [{ mode: 'AUTO' }, 'auto'],
    [{ mode: 'NONE' }, 'none'],
    [{ mode: 'ANY' }, 'required'],
    [
      { mode: 'ANY', allowedFunctionNames: ['a', 'b'] },
      {
        type: 'allowed_tools',
        allowed_tools: {
          mode: 'required',
          tools: [
            { type: 'function', function: { name: 'a' } },
            { type: 'function', function: { name: 'b' } },
          ],
        },
      },
    ],
  ])('maps functionCallingConfig %j', (config, choice) => {
    const body = upstreamBody(geminiToChat, {
      contents: [{ parts: [{ text: 'x' }] }],
      tools: [LIGHTS],
      toolConfig: { functionCallingConfig: config },
    })
    expect(body).toMatchObject({ tool_choice: choice })
  })

  it('maps mode VALIDATED to strict tools', () => {
    const body = upstreamBody(geminiToChat, {
      contents: [{ parts: [{ text: 'x' }] }],
      tools: [LIGHTS],
      toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } },
    })
    expect(body).toMatchObject({ tools: [{ function: { strict: true } }], tool_choice: 'auto' })
  })

  it('passes parametersJsonSchema on as the parameters', () => {
    const schema = { type: 'object', properties: { q: { type: ['string', 'null'] } }, additionalProperties: false }
    const body = upstreamBody(geminiToChat, {
      contents: [{ parts: [{ text: 'x' }] }],
      tools: [{ functionDeclarations: [{ name: 'search', parametersJsonSchema: schema }] }],
    })
    expect(body).toMatchObject({ tools: [{ type: 'function', function: { name: 'search', parameters: schema } }] })
  })

  it('gives calls without ids stable ids and matches responses to them by name, in order', () => {
    const fields = {
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and London?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
            { functionCall: { name: 'get_weather', args: { city: 'London' } } },
            { functionCall: { id: 'given', name: 'get_time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_time', response: { time: '12:00' } } },
            { functionResponse: { name: 'get_weather', response: { output: 'sunny' } } },
            { functionResponse: { name: 'get_weather', response: { temp: 12 } } },
          ],
        },
      ],
    }
    const body = upstreamBody(geminiToChat, fields)
    expect(body).toEqual({
      model: 'upstream-model',
      messages: [
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_1_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"London"}' } },
            { id: 'given', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'given', content: '{"time":"12:00"}' },
        { role: 'tool', tool_call_id: 'call_1_0', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_1_1', content: '{"temp":12}' },
      ],
    })
    expect(upstreamBody(geminiToChat, fields)).toEqual(body)
  })

  it('maps generationConfig', () => {
    const body = upstreamBody(geminiToChat, {
      contents: [{ parts: [{ text: 'x' }] }],
      generationConfig: {
        temperature: 1.0,
        topP: 0.8,
        maxOutputTokens: 800,
        stopSequences: ['Title'],
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseModalities: ['TEXT'],
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: false },
      },
    })
    expect(body).toEqual({
      model: 'upstream-model',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 1.0,
      top_p: 0.8,
      max_completion_tokens: 800,
      stop: ['Title'],
      n: 2,
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      reasoning_effort: 'low',
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

  it('maps JSON output with and without a schema', () => {
    expect(
      upstreamBody(geminiToChat, { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { responseMimeType: 'application/json' } }),
    ).toMatchObject({
      response_format: { type: 'json_object' },
    })
    const body = upstreamBody(geminiToChat, {
      contents: [{ parts: [{ text: 'List a few popular cookie recipes.' }] }],
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'ARRAY',
          items: {
            type: 'OBJECT',
            properties: { recipeName: { type: 'STRING' }, ingredients: { type: 'ARRAY', items: { type: 'STRING' } } },
            propertyOrdering: ['recipeName', 'ingredients'],
          },
        },
      },
    })
    expect(body).toMatchObject({
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'response',
          schema: {
            type: 'array',
            items: {
              type: 'object',
              properties: { recipeName: { type: 'string' }, ingredients: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
    })
  })

  it('asks a chat upstream for usage in a stream, whatever the client said', () => {
    const fields = { contents: [{ parts: [{ text: 'x' }] }] }
    expect(upstreamBody(geminiToChat, fields, true)).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    expect(planOf(geminiToChat, fields, true)).toEqual({ ...callInfo(true), includeUsage: true, request: fields })
  })

  it.each([
    ['generationConfig.topK', { generationConfig: { topK: 40 } }],
    ['safetySettings', { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] }],
    ['cachedContent', { cachedContent: 'cachedContents/abc' }],
    ['tools[0].googleSearch', { tools: [{ googleSearch: {} }] }],
    ['tools[0].codeExecution', { tools: [{ codeExecution: {} }] }],
    ['generationConfig.thinkingConfig.includeThoughts', { generationConfig: { thinkingConfig: { includeThoughts: true } } }],
    ['generationConfig.responseMimeType', { generationConfig: { responseMimeType: 'text/x.enum' } }],
    ['generationConfig.responseModalities', { generationConfig: { responseModalities: ['IMAGE'] } }],
    ['generationConfig.responseLogprobs', { generationConfig: { responseLogprobs: true } }],
    [
      'toolConfig.functionCallingConfig.allowedFunctionNames',
      { toolConfig: { functionCallingConfig: { mode: 'AUTO', allowedFunctionNames: ['a'] } } },
    ],
    [
      'tools[0].functionDeclarations[0].parameters.properties.a.oneOf',
      { tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { a: { oneOf: [] } } } }] }] },
    ],
    ['tools[0].functionDeclarations[0].behavior', { tools: [{ functionDeclarations: [{ name: 'f', behavior: 'NON_BLOCKING' }] }] }],
  ])('refuses %s', (field, extra) => {
    expect(refusedField(geminiToChat, { contents: [{ parts: [{ text: 'x' }] }], ...extra })).toBe(field)
  })

  it.each([
    ['contents[0].parts[0].inlineData.mimeType', [{ parts: [{ inlineData: { mimeType: 'video/mp4', data: 'AA==' } }] }]],
    [
      'contents[0].parts[0].fileData.fileUri',
      [{ parts: [{ fileData: { mimeType: 'image/png', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } }] }],
    ],
    [
      'contents[0].parts[0].fileData.mimeType',
      [{ parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } }] }],
    ],
    ['contents[0].parts[0].thought', [{ role: 'model', parts: [{ text: 'hmm', thought: true }] }]],
    ['contents[0].parts[0].executableCode', [{ role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }] }]],
    ['contents[0].parts[0].functionResponse.name', [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }]],
    ['contents[0].parts[0].functionCall', [{ role: 'user', parts: [{ functionCall: { name: 'f', args: {} } }] }]],
    ['contents[0].role', [{ role: 'system', parts: [{ text: 'x' }] }]],
  ])('refuses %s', (field, contents) => {
    expect(refusedField(geminiToChat, { contents })).toBe(field)
  })
})

describe('protobuf field names', () => {
  it('refuses a field given in both spellings', () => {
    expect(
      refusedField(geminiToChat, {
        contents: [{ parts: [{ text: 'x' }] }],
        generationConfig: { maxOutputTokens: 1, max_output_tokens: 2 },
      }),
    ).toBe('generationConfig.maxOutputTokens')
  })

  it('leaves the names inside function arguments and schemas alone', () => {
    const body = upstreamBody(geminiToChat, {
      contents: [
        { role: 'model', parts: [{ function_call: { name: 'f', args: { snake_case: 1 } } }] },
        { role: 'user', parts: [{ function_response: { name: 'f', response: { snake_case: 2 } } }] },
      ],
      tools: [{ function_declarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { snake_case: { type: 'INTEGER' } } } }] }],
    })
    expect(body).toMatchObject({
      messages: [
        { role: 'assistant', tool_calls: [{ function: { arguments: '{"snake_case":1}' } }] },
        { role: 'tool', content: '{"snake_case":2}' },
      ],
      tools: [{ function: { parameters: { type: 'object', properties: { snake_case: { type: 'integer' } } } } }],
    })
  })
})
