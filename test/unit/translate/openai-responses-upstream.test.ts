// The Responses API as an upstream's format (`api: 'responses'`): the option, the request written from another
// dialect's call, the answer and errors read back, and the stream decoded, each as a client of another format sees it.
import { describe, expect, it } from 'vitest'
import { UpstreamBodies } from '../../../src/call/upstream-bodies.js'
import { resolveOptions } from '../../../src/config/resolve.js'
import {
  anthropic,
  chatCompletions,
  type Dialect,
  gemini,
  messages,
  openai,
  translatorFor,
  upstreamApi,
} from '../../../src/dialects/index.js'
import { ResponsesStreamDecoder } from '../../../src/dialects/openai/responses/upstream-stream.js'
import { isGatewayError } from '../../../src/errors.js'
import { sseEvent } from '../../../src/sse/write.js'
import type { GatewayOptions } from '../../../src/types.js'
import { ok, planOf, refusedField, strictlyRefusedField, typedFrames, upstreamBody } from './helpers.js'

const RESPONSES = upstreamApi(openai, { api: 'responses' })
const messagesToResponses = translatorFor(anthropic, openai, 'messages', RESPONSES)!
const geminiToResponses = translatorFor(gemini, openai, 'generateContent', RESPONSES)!

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}

/** A Messages request with these members besides its model, limit and one user message. */
const claude = (fields: Record<string, unknown> = {}) => ({
  model: 'claude-on-responses',
  max_tokens: 512,
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
  ...fields,
})

function resolved(gpt: Record<string, unknown>) {
  return resolveOptions({
    upstreams: { gpt: { type: 'openai', baseUrl: 'https://api.openai.example/v1', apiKey: 'sk-upstream', ...gpt } },
    models: [{ id: 'gpt-5-codex', upstream: 'gpt' }],
    auth: { apiKeys: ['sk-client'] },
  } as GatewayOptions)
}

function configError(gpt: Record<string, unknown>, type = 'openai'): string {
  try {
    resolved({ ...gpt, type })
  } catch (error) {
    if (isGatewayError(error)) return error.message
    throw error
  }
  return expect.fail('expected the options to be refused')
}

describe('the api option of an upstream', () => {
  it("takes 'chat' (the default) or 'responses' on an openai upstream, and nothing else", () => {
    expect(resolved({}).upstreams.get('gpt')?.api.operation).toBe('chat.completions')
    expect(resolved({ api: 'chat' }).upstreams.get('gpt')?.api.operation).toBe('chat.completions')
    expect(resolved({ api: 'responses' }).upstreams.get('gpt')?.api.operation).toBe('responses')
    expect(configError({ api: 'completions' })).toContain("upstreams.gpt.api must be 'chat' or 'responses'")
    expect(configError({ api: 'responses' }, 'gemini')).toContain(
      "upstreams.gpt.api is an option of type 'openai' or type 'azure' upstreams only",
    )
  })

  it('sends translated calls to the Responses operation, and keeps chat clients passthrough', () => {
    const model = resolved({ api: 'responses' }).models.get('gpt-5-codex')!
    const bodies = (inbound: Dialect, format: typeof messages) => {
      const bytes = Buffer.from(JSON.stringify(claude({ model: 'gpt-5-codex' })))
      const body = { bytes, fields: JSON.parse(bytes.toString()), value: undefined, spans: undefined }
      return new UpstreamBodies({ requestId: 'r', format, inbound, body, model, stream: false, clientHeaders: {} })
    }
    const translated = bodies(anthropic, messages)
    expect(translated.operationFor(model)).toBe('responses')
    expect(JSON.parse(String(translated.for(model)))).toMatchObject({ model: 'gpt-5-codex', store: false, input: [{ role: 'user' }] })
    const passthrough = bodies(openai, chatCompletions)
    expect(passthrough.operationFor(model)).toBe('chat.completions')
    expect(passthrough.translationFor(model)).toBeUndefined()
  })
})

describe('a request written for a Responses upstream', () => {
  it('has the conversation as input items, instructions, function tools with parameters and strict, and store false', () => {
    const body = upstreamBody(
      messagesToResponses,
      claude({
        system: 'Be brief.',
        tools: [WEATHER, { name: 'now', description: 'The time', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'get_weather' },
        temperature: 0.2,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny' },
              { type: 'text', text: 'And?' },
            ],
          },
        ],
      }),
      true,
    )
    expect(body).toEqual({
      model: 'upstream-model',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And?' }] },
      ],
      instructions: 'Be brief.',
      store: false,
      stream: true,
      tools: [
        { type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: WEATHER.input_schema, strict: false },
        { type: 'function', name: 'now', description: 'The time', parameters: { type: 'object' }, strict: false },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: 512,
      temperature: 0.2,
    })
  })

  it('asks for a reasoning effort from a thinking budget, and for the encrypted reasoning it needs back', () => {
    const body = upstreamBody(messagesToResponses, claude({ thinking: { type: 'enabled', budget_tokens: 4000 } }))
    expect(body).toMatchObject({ reasoning: { effort: 'medium' }, include: ['reasoning.encrypted_content'] })
    expect(upstreamBody(messagesToResponses, claude())).not.toHaveProperty('include')
  })

  it('sends an OpenAI model’s reasoning back as a reasoning item, and leaves another provider’s out', () => {
    const turn = (signature: string) =>
      claude({
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Greet.', signature },
              { type: 'text', text: 'Hello' },
            ],
          },
          { role: 'user', content: 'Again' },
        ],
      })
    const own = upstreamBody(messagesToResponses, turn('rs_abc:gAAAAenc')) as { input: unknown[]; include?: unknown }
    expect(own.input[1]).toEqual({
      type: 'reasoning',
      id: 'rs_abc',
      summary: [{ type: 'summary_text', text: 'Greet.' }],
      encrypted_content: 'gAAAAenc',
    })
    expect(own.input[2]).toEqual({ type: 'message', role: 'assistant', content: 'Hello' })
    expect(own.include).toEqual(['reasoning.encrypted_content'])
    const foreign = upstreamBody(messagesToResponses, turn('EqQBCkgIBxAB')) as { input: Array<{ type: string }> }
    expect(foreign.input.map((item) => item.type)).toEqual(['message', 'message', 'message'])
  })

  it('writes a JSON schema answer as text.format, its required name filled in', () => {
    const body = upstreamBody(geminiToResponses, {
      contents: [{ role: 'user', parts: [{ text: 'x' }] }],
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object' } },
    })
    expect(body).toMatchObject({ text: { format: { type: 'json_schema', name: 'response', schema: { type: 'object' } } } })
  })

  it('refuses what the Responses API has no field for, by the client’s own path', () => {
    expect(refusedField(messagesToResponses, claude({ stop_sequences: ['END'] }))).toBe('stop_sequences')
    // Top-k only tunes sampling: dropped and named, refused only under translation.strict.
    expect(planOf(messagesToResponses, claude({ top_k: 5 })).dropped).toEqual(['top_k'])
    expect(strictlyRefusedField(messagesToResponses, claude({ top_k: 5 }))).toBe('top_k')
    const contents = [{ role: 'user', parts: [{ text: 'x' }] }]
    expect(refusedField(geminiToResponses, { contents, generationConfig: { seed: 3 } })).toBe('generationConfig.seed')
    expect(refusedField(geminiToResponses, { contents, generationConfig: { stopSequences: ['x'] } })).toBe('generationConfig.stopSequences')
  })
})

/** A Responses object as OpenAI answers one, with these output items, status and details. */
const answer = (output: unknown[], extra: Record<string, unknown> = {}) => ({
  id: 'resp_1',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  model: 'gpt-5-codex',
  output,
  usage: {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 40 },
    output_tokens: 30,
    output_tokens_details: { reasoning_tokens: 12 },
    total_tokens: 130,
  },
  ...extra,
})

const REASONING = { type: 'reasoning', id: 'rs_9', summary: [{ type: 'summary_text', text: 'Look it up.' }], encrypted_content: 'gAAAAx' }
const CALL = {
  type: 'function_call',
  id: 'fc_1',
  status: 'completed',
  call_id: 'call_7',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
}
const TEXT = {
  type: 'message',
  id: 'msg_1',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }],
}

describe('an answer read from a Responses upstream', () => {
  const plan = planOf(messagesToResponses, claude())

  it('gives a Messages client reasoning with its token, the tool call, the stop reason and the usage', () => {
    const out = ok(messagesToResponses.response(answer([REASONING, CALL]), plan)) as Record<string, unknown>
    expect(out.content).toEqual([
      { type: 'thinking', thinking: 'Look it up.', signature: 'rs_9:gAAAAx' },
      { type: 'tool_use', id: 'call_7', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
    ])
    expect(out).toMatchObject({ stop_reason: 'tool_use', usage: { output_tokens: 30, cache_read_input_tokens: 40 } })
  })

  it('says an answer cut at its limit stopped at max_tokens, and a refusal is a refusal', () => {
    const cut = answer([TEXT], { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })
    expect(ok(messagesToResponses.response(cut, plan))).toMatchObject({
      stop_reason: 'max_tokens',
      content: [{ type: 'text', text: 'Sunny.' }],
    })
    const refused = answer([{ ...TEXT, content: [{ type: 'refusal', refusal: 'No.' }] }])
    const geminiPlan = planOf(geminiToResponses, { contents: [{ role: 'user', parts: [{ text: 'x' }] }] })
    expect(ok(geminiToResponses.response(refused, geminiPlan))).toMatchObject({
      candidates: [{ content: { parts: [{ text: 'No.' }] } }],
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 40 },
    })
  })

  it('reads an OpenAI error body into the client’s error shape', () => {
    const error = { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }
    expect(messagesToResponses.error(429, error)).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Rate limit reached' },
    })
  })
})

/** A Responses stream's events, numbered as OpenAI numbers them. */
const numbered = (events: Record<string, unknown>[]) => events.map((event, i) => ({ ...event, sequence_number: i }))

const STREAM = numbered([
  {
    type: 'response.created',
    response: { id: 'resp_2', model: 'gpt-5-codex', created_at: 1_700_000_001, status: 'in_progress', output: [] },
  },
  { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_2', summary: [] } },
  { type: 'response.reasoning_summary_text.delta', output_index: 0, item_id: 'rs_2', summary_index: 0, delta: 'Think.' },
  {
    type: 'response.output_item.done',
    output_index: 0,
    item: { ...REASONING, id: 'rs_2', summary: [{ type: 'summary_text', text: 'Think.' }] },
  },
  { type: 'response.output_item.added', output_index: 1, item: { ...CALL, arguments: '', status: 'in_progress' } },
  { type: 'response.function_call_arguments.delta', output_index: 1, item_id: 'fc_1', delta: '{"city":' },
  { type: 'response.function_call_arguments.delta', output_index: 1, item_id: 'fc_1', delta: '"Paris"}' },
  { type: 'response.function_call_arguments.done', output_index: 1, item_id: 'fc_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { type: 'response.output_item.done', output_index: 1, item: CALL },
  { type: 'response.completed', response: answer([REASONING, CALL], { id: 'resp_2' }) },
])

describe('a stream read from a Responses upstream', () => {
  it('decodes reasoning, a function call fragment by fragment, the end and the usage into hub events', () => {
    const decoder = new ResponsesStreamDecoder()
    const events = STREAM.flatMap((event) => decoder.event(JSON.stringify(event)))
    expect(events).toEqual([
      { type: 'meta', id: 'resp_2', model: 'gpt-5-codex', created: 1_700_000_001 },
      { type: 'reasoning', choice: 0, text: 'Think.', signature: undefined, redacted: false },
      { type: 'reasoning', choice: 0, text: '', signature: 'rs_2:gAAAAx', redacted: false },
      { type: 'tool_call', choice: 0, index: 0, id: 'call_7', name: 'get_weather', args: '', signature: undefined },
      { type: 'tool_call', choice: 0, index: 0, id: undefined, name: undefined, args: '{"city":', signature: undefined },
      { type: 'tool_call', choice: 0, index: 0, id: undefined, name: undefined, args: '"Paris"}', signature: undefined },
      { type: 'finish', choice: 0, finish: { reason: 'tool_calls', native: 'completed' } },
      {
        type: 'usage',
        usage: { input: 100, output: 30, total: 130, cachedInput: 40, cacheWrite: undefined, reasoning: 12, toolPrompt: undefined },
      },
    ])
  })

  it('takes a call’s arguments whole from an upstream that sends no deltas, and an error event as an error', () => {
    const decoder = new ResponsesStreamDecoder()
    const events = [
      { type: 'response.output_item.added', output_index: 0, item: { ...CALL, arguments: '' } },
      { type: 'response.output_item.done', output_index: 0, item: CALL },
      { type: 'error', code: 'server_error', message: 'The model failed.', param: null },
    ].flatMap((event) => decoder.event(JSON.stringify(event)))
    expect(events.filter((event) => event.type === 'tool_call').map((event) => event.type === 'tool_call' && event.args)).toEqual([
      '',
      '{"city":"Paris"}',
    ])
    expect(events.at(-1)).toEqual({
      type: 'error',
      status: 500,
      error: { message: 'The model failed.', code: 'server_error', param: undefined },
    })
    expect(decoder.event('not json')).toMatchObject([{ type: 'error', status: 502 }])
  })

  it('gives a Messages client a thinking block with its signature, the tool use and message_delta with the usage', () => {
    const stream = messagesToResponses.stream(planOf(messagesToResponses, claude({ stream: true }), true))
    let out = ''
    for (const event of STREAM) out += stream.write(sseEvent(JSON.stringify(event)))
    const frames = typedFrames(out + stream.end())
    const deltas = frames.filter((f) => f.event === 'content_block_delta').map((f) => f.data.delta)
    expect(deltas).toEqual([
      { type: 'thinking_delta', thinking: 'Think.' },
      { type: 'signature_delta', signature: 'rs_2:gAAAAx' },
      { type: 'input_json_delta', partial_json: '{"city":' },
      { type: 'input_json_delta', partial_json: '"Paris"}' },
    ])
    expect(frames.find((f) => f.event === 'message_delta')?.data).toMatchObject({
      delta: { stop_reason: 'tool_use' },
      usage: { output_tokens: 30 },
    })
  })
})
