// Gemini's request rules: how a request is written for a Gemini upstream (declarations in the schema subset, tool
// config modes, thinking budgets, function responses), and how a generate-content request is read (roles, snake_case
// names, calls without ids, what is refused).
import { describe, expect, it } from 'vitest'
import { chatToGemini, geminiToChat, planOf, refusedField, strictlyRefusedField, upstreamBody, WEATHER_TOOL } from './helpers.js'

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

describe('a request written for Gemini', () => {
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
})

describe('a generate-content request read', () => {
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

  it.each([
    ['generationConfig.topK', { generationConfig: { topK: 40 } }],
    ['generationConfig.thinkingConfig.includeThoughts', { generationConfig: { thinkingConfig: { includeThoughts: true } } }],
  ])('drops and names %s, which chat completions lacks, and refuses it under translation.strict', (field, extra) => {
    const fields = { contents: [{ parts: [{ text: 'x' }] }], ...extra }
    expect(planOf(geminiToChat, fields).dropped).toEqual([field])
    expect(upstreamBody(geminiToChat, fields)).toEqual({ model: 'upstream-model', messages: [{ role: 'user', content: 'x' }] })
    expect(strictlyRefusedField(geminiToChat, fields)).toBe(field)
  })

  it.each([
    ['safetySettings', { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] }],
    ['cachedContent', { cachedContent: 'cachedContents/abc' }],
    ['tools[0].googleSearch', { tools: [{ googleSearch: {} }] }],
    ['tools[0].codeExecution', { tools: [{ codeExecution: {} }] }],
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
    ['contents[0].parts[0].thought', [{ role: 'user', parts: [{ text: 'hmm', thought: true }] }]],
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
