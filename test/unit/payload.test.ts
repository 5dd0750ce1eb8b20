import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  type GeminiGenerationConfig,
  type GeminiRequest,
  type GeminiThinkingConfig,
  geminiGenerationConfig,
  geminiRequest,
  geminiThinkingConfig,
} from '../../src/dialects/gemini/generate-content/wire.js'
import { chatCompletions, generateContent, responses } from '../../src/dialects/index.js'
import { type ChatRequest, chatRequest } from '../../src/dialects/openai/chat-completions/wire.js'
import { type ResponsesRequest, responsesRequest } from '../../src/dialects/openai/responses/wire.js'
import { field, hintField, optionalField, type PayloadType, payload } from '../../src/translate/payload.js'
import { attempt, camelKeys, integer, string } from '../../src/translate/readers.js'
import { callInfo, chatToGemini, geminiToChat, responsesToGemini } from './translate/helpers.js'

const sorted = (set: ReadonlySet<string>) => [...set].sort()
const list = (...names: string[]) => names.sort()

describe('payload', () => {
  const sample = payload({ name: field(string, { gatewayReads: true }), size: optionalField(integer) })

  it('derives the known and gateway-read member sets from its one list', () => {
    expect(sorted(sample.known)).toEqual(['name', 'size'])
    expect(sorted(sample.gatewayReads)).toEqual(['name'])
  })

  it('reads an optional member that is absent or null as undefined, and refuses by the member path', () => {
    expect(sample.read({}, 'size')).toBeUndefined()
    expect(sample.read({ size: null }, 'size', 'a')).toBeUndefined()
    expect(sample.read({ size: 3 }, 'size', 'a')).toBe(3)
    expect(attempt(() => sample.read({ size: 1.5 }, 'size', 'a.b'))).toEqual({
      ok: false,
      field: 'a.b.size',
      message: "'a.b.size' must be an integer.",
    })
    expect(attempt(() => sample.read({}, 'name'))).toEqual({ ok: false, field: 'name', message: "'name' must be a string." })
  })

  it('refuses an object with a member it does not list, after normalising names when told to', () => {
    expect(attempt(() => sample.object({ name: 'x', colour: 'red' }, 'items[2]'))).toEqual({
      ok: false,
      field: 'items[2].colour',
      message: "'items[2].colour' is not a field this gateway can translate for the upstream's format.",
    })
    expect(attempt(() => sample.object('x', 'items[2]'))).toEqual({
      ok: false,
      field: 'items[2]',
      message: "'items[2]' must be an object.",
    })
    const camel = payload({ mimeType: field(string) }, { keys: camelKeys })
    expect(camel.object({ mime_type: 'image/png' }, 'part')).toEqual({ mimeType: 'image/png' })
  })

  it('knows its hint members, and names the ones a body sets, by path, whatever their value', () => {
    const hinted = payload({ name: field(string), cache_key: hintField(), metadata: hintField() })
    expect(sorted(hinted.known)).toEqual(['cache_key', 'metadata', 'name'])
    expect(sorted(hinted.hints)).toEqual(['cache_key', 'metadata'])
    expect(hinted.object({ name: 'x', metadata: { a: 1 }, cache_key: null }, 'tools[0]')).toBeTypeOf('object')
    expect(hinted.hinted({ name: 'x', metadata: { a: 1 }, cache_key: null }, 'tools[0]')).toEqual(['tools[0].metadata'])
    expect(hinted.hinted({ cache_key: false, name: 'x', metadata: {} })).toEqual(['cache_key', 'metadata'])
    expect(hinted.hinted({ name: 'x' })).toEqual([])
    expect(sample.hinted({ name: 'x', size: 1 })).toEqual([])
  })

  it('infers the TS type: required members as read, optional ones with ?', () => {
    expectTypeOf<PayloadType<typeof sample>>().toEqualTypeOf<{ name: string } & { size?: number }>()
    expectTypeOf(sample.read({}, 'size')).toEqualTypeOf<number | undefined>()
  })
})

describe('request schemas', () => {
  it('chat completions: the known members and the members the gateway reads', () => {
    expect(sorted(chatRequest.known)).toEqual(
      list(
        'model',
        'messages',
        'stream',
        'stream_options',
        'tools',
        'tool_choice',
        'parallel_tool_calls',
        'response_format',
        'temperature',
        'top_p',
        'max_completion_tokens',
        'max_tokens',
        'stop',
        'n',
        'seed',
        'presence_penalty',
        'frequency_penalty',
        'reasoning_effort',
        'logprobs',
        'modalities',
        'store',
        'metadata',
        'user',
        'safety_identifier',
        'prompt_cache_key',
        'prompt_cache_retention',
        'service_tier',
      ),
    )
    expect(sorted(chatRequest.hints)).toEqual(
      list('store', 'metadata', 'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'),
    )
    const reads = list(
      'model',
      'messages',
      'stream',
      // Read so a stream whose client did not ask for usage can have it asked for upstream.
      'stream_options',
      'temperature',
      'top_p',
      'presence_penalty',
      'frequency_penalty',
      'n',
      'max_completion_tokens',
      'max_tokens',
    )
    expect(sorted(chatRequest.gatewayReads)).toEqual(reads)
    expect(chatCompletions.readFields).toBe(chatRequest.gatewayReads)
  })

  it('Responses: the known members and the members the gateway reads', () => {
    expect(sorted(responsesRequest.known)).toEqual(
      list(
        'model',
        'input',
        'instructions',
        'stream',
        'stream_options',
        'tools',
        'tool_choice',
        'parallel_tool_calls',
        'text',
        'temperature',
        'top_p',
        'max_output_tokens',
        'reasoning',
        'include',
        'metadata',
        'store',
        'user',
        'safety_identifier',
        'prompt_cache_key',
        'prompt_cache_retention',
        'client_metadata',
        'service_tier',
        'background',
        'truncation',
        'top_logprobs',
        'previous_response_id',
        'conversation',
        'prompt',
      ),
    )
    expect(sorted(responsesRequest.hints)).toEqual(
      list(
        'metadata',
        'store',
        'user',
        'safety_identifier',
        'prompt_cache_key',
        'prompt_cache_retention',
        'client_metadata',
        'service_tier',
      ),
    )
    expect(sorted(responsesRequest.gatewayReads)).toEqual(
      list('model', 'input', 'stream', 'background', 'temperature', 'top_p', 'max_output_tokens'),
    )
    expect(responses.readFields).toBe(responsesRequest.gatewayReads)
  })

  it('generate-content: the known members, generationConfig and thinkingConfig, and the members the gateway reads', () => {
    expect(sorted(geminiRequest.known)).toEqual(
      list('contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings'),
    )
    expect(sorted(geminiGenerationConfig.known)).toEqual(
      list(
        'temperature',
        'topP',
        'maxOutputTokens',
        'stopSequences',
        'candidateCount',
        'seed',
        'presencePenalty',
        'frequencyPenalty',
        'topK',
        'responseMimeType',
        'responseSchema',
        'responseJsonSchema',
        'responseModalities',
        'thinkingConfig',
      ),
    )
    expect(sorted(geminiThinkingConfig.known)).toEqual(list('thinkingBudget', 'thinkingLevel', 'includeThoughts'))
    expect(sorted(geminiRequest.gatewayReads)).toEqual(['contents'])
    expect(generateContent.readFields).toBe(geminiRequest.gatewayReads)
  })

  it('types each request with every member the schema accepts', () => {
    expectTypeOf<keyof ChatRequest>().toEqualTypeOf<
      | 'model'
      | 'messages'
      | 'stream'
      | 'stream_options'
      | 'tools'
      | 'tool_choice'
      | 'parallel_tool_calls'
      | 'response_format'
      | 'temperature'
      | 'top_p'
      | 'max_completion_tokens'
      | 'max_tokens'
      | 'stop'
      | 'n'
      | 'seed'
      | 'presence_penalty'
      | 'frequency_penalty'
      | 'reasoning_effort'
      | 'logprobs'
      | 'modalities'
      | 'store'
      | 'metadata'
      | 'user'
      | 'safety_identifier'
      | 'prompt_cache_key'
      | 'prompt_cache_retention'
      | 'service_tier'
    >()
    expectTypeOf<ChatRequest['model']>().toEqualTypeOf<string>()
    expectTypeOf<ChatRequest['messages']>().toEqualTypeOf<unknown[]>()
    expectTypeOf<ChatRequest['stream']>().toEqualTypeOf<boolean | undefined>()
    expectTypeOf<ChatRequest['stop']>().toEqualTypeOf<string | string[] | undefined>()
    expectTypeOf<ChatRequest['modalities']>().toEqualTypeOf<string[] | undefined>()
    expectTypeOf<{ messages: [] }>().not.toMatchTypeOf<ChatRequest>()
    expectTypeOf<ResponsesRequest['input']>().toEqualTypeOf<string | unknown[]>()
    expectTypeOf<ResponsesRequest['max_output_tokens']>().toEqualTypeOf<number | undefined>()
    expectTypeOf<ResponsesRequest>().toHaveProperty('previous_response_id')
    expectTypeOf<GeminiRequest['contents']>().toEqualTypeOf<unknown[]>()
    expectTypeOf<keyof GeminiRequest>().toEqualTypeOf<
      'contents' | 'systemInstruction' | 'tools' | 'toolConfig' | 'generationConfig' | 'safetySettings'
    >()
    expectTypeOf<GeminiGenerationConfig['stopSequences']>().toEqualTypeOf<string[] | undefined>()
    expectTypeOf<GeminiGenerationConfig>().toHaveProperty('responseModalities')
    expectTypeOf<GeminiThinkingConfig['includeThoughts']>().toEqualTypeOf<boolean | undefined>()
  })
})

describe('refusals through the schemas', () => {
  const user = [{ role: 'user', content: 'x' }]
  const contents = [{ role: 'user', parts: [{ text: 'x' }] }]
  const refusal = (translator: typeof chatToGemini, fields: Record<string, unknown>) => {
    const result = translator.request(fields, callInfo())
    return result.ok ? undefined : { field: result.field, message: result.message }
  }
  const notTranslated = (path: string) => ({
    field: path,
    message: `'${path}' is not a field this gateway can translate for the upstream's format.`,
  })

  it.each<[string, Record<string, unknown>, { field: string; message: string }]>([
    ['an unknown member', { model: 'm', messages: user, foo: 1 }, notTranslated('foo')],
    ['messages that are not a list', { model: 'm', messages: 'x' }, { field: 'messages', message: "'messages' must be an array." }],
    [
      'a wrong type',
      { model: 'm', messages: user, temperature: 'hot' },
      { field: 'temperature', message: "'temperature' must be a number." },
    ],
    [
      'a stop that is not text',
      { model: 'm', messages: user, stop: ['a', 1] },
      { field: 'stop[1]', message: "'stop[1]' must be a string." },
    ],
    [
      'an unknown stream option',
      { model: 'm', messages: user, stream_options: { chunk_size: 2 } },
      notTranslated('stream_options.chunk_size'),
    ],
    [
      'a stream option of the wrong type',
      { model: 'm', messages: user, stream_options: { include_usage: 'yes' } },
      { field: 'stream_options.include_usage', message: "'stream_options.include_usage' must be a boolean." },
    ],
    [
      'a tool call without an id',
      {
        model: 'm',
        messages: [{ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }],
      },
      { field: 'messages[0].tool_calls[0].id', message: "'messages[0].tool_calls[0].id' must be a string." },
    ],
    [
      'a function description that is not text',
      { model: 'm', messages: user, tools: [{ type: 'function', function: { name: 'f', description: 5 } }] },
      { field: 'tools[0].function.description', message: "'tools[0].function.description' must be a string." },
    ],
  ])('chat completions: %s', (_, fields, expected) => {
    expect(refusal(chatToGemini, fields)).toEqual(expected)
  })

  it.each<[string, Record<string, unknown>, { field: string; message: string }]>([
    ['no input', { model: 'm' }, { field: 'input', message: "'input' is required." }],
    ['input of the wrong type', { model: 'm', input: 5 }, { field: 'input', message: "'input' must be an array." }],
    [
      'an unknown json_schema member',
      { model: 'm', input: 'x', text: { format: { type: 'json_schema', schema: {}, extra: 1 } } },
      notTranslated('text.format.extra'),
    ],
    [
      'an effort that is not text',
      { model: 'm', input: 'x', reasoning: { effort: 3 } },
      { field: 'reasoning.effort', message: "'reasoning.effort' must be a string." },
    ],
    [
      'call arguments that are not text',
      { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: 1 }] },
      { field: 'input[0].arguments', message: "'input[0].arguments' must be a string." },
    ],
  ])('Responses: %s', (_, fields, expected) => {
    expect(refusal(responsesToGemini, fields)).toEqual(expected)
  })

  it.each<[string, Record<string, unknown>, { field: string; message: string }]>([
    ['no contents', {}, { field: 'contents', message: "'contents' must be an array." }],
    [
      'an unknown generationConfig member, named in camelCase',
      { contents, generation_config: { response_logprobs: true } },
      notTranslated('generationConfig.responseLogprobs'),
    ],
    [
      'both spellings of a member',
      { contents, generationConfig: {}, generation_config: {} },
      { field: 'generationConfig', message: "'generationConfig' is given twice (in snake_case and camelCase)." },
    ],
    [
      'a stop sequence that is not text',
      { contents, generationConfig: { stopSequences: ['a', 2] } },
      { field: 'generationConfig.stopSequences[1]', message: "'generationConfig.stopSequences[1]' must be a string." },
    ],
    [
      'a thinking budget that is not an integer',
      { contents, generationConfig: { thinkingConfig: { thinking_budget: 'x' } } },
      {
        field: 'generationConfig.thinkingConfig.thinkingBudget',
        message: "'generationConfig.thinkingConfig.thinkingBudget' must be an integer.",
      },
    ],
    [
      'inline data without its bytes',
      { contents: [{ parts: [{ inline_data: { mime_type: 'image/png' } }] }] },
      { field: 'contents[0].parts[0].inlineData.data', message: "'contents[0].parts[0].inlineData.data' must be a string." },
    ],
    [
      'an unknown systemInstruction member',
      { contents, systemInstruction: { parts: [{ text: 'a' }], foo: 1 } },
      notTranslated('systemInstruction.foo'),
    ],
  ])('generate-content: %s', (_, fields, expected) => {
    expect(refusal(geminiToChat, fields)).toEqual(expected)
  })
})
