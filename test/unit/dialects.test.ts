import { describe, expect, it } from 'vitest'
import { azure } from '../../src/dialects/azure/index.js'
import {
  anthropic,
  batchEmbedContents,
  chatCompletions,
  countTokens,
  DIALECT_NAMES,
  dialectNamed,
  embedContent,
  embeddings,
  gemini,
  generateContent,
  messages,
  messagesCountTokens,
  openai,
  responses,
} from '../../src/dialects/index.js'
import { otherFormatRefusal } from '../../src/dialects/refusal.js'
import { GatewayError, STATUS_BY_CODE } from '../../src/errors.js'
import { HTTP_BY_CODE_NAME } from '../conformance/schemas/google.js'

/** A Google error body. */
interface GoogleError {
  error: { code: number; message: string; status: string }
}

describe('dialect registry', () => {
  it('maps every configured type to its dialect and nothing else', () => {
    expect(DIALECT_NAMES.map((name) => dialectNamed(name)?.name)).toEqual(['openai', 'gemini', 'anthropic', 'azure', 'vertex', 'bedrock'])
    expect(dialectNamed('mistral')).toBeUndefined()
    expect(dialectNamed('toString')).toBeUndefined()
    expect(dialectNamed(undefined)).toBeUndefined()
  })
})

describe('error bodies', () => {
  it('renders OpenAI errors with type, param and code', () => {
    expect(openai.errorBody({ status: 400, code: 'invalid_request', message: 'bad', param: 'temperature' })).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', param: 'temperature', code: 'invalid_request' },
    })
    expect(openai.errorBody({ status: 502, code: 'upstream_unreachable', message: 'down', param: undefined })).toEqual({
      error: { message: 'down', type: 'api_error', param: null, code: 'upstream_unreachable' },
    })
  })

  it.each([
    [400, 400, 'INVALID_ARGUMENT'],
    [401, 401, 'UNAUTHENTICATED'],
    [404, 404, 'NOT_FOUND'],
    [405, 404, 'NOT_FOUND'],
    [408, 504, 'DEADLINE_EXCEEDED'],
    [409, 409, 'ABORTED'],
    [413, 400, 'INVALID_ARGUMENT'],
    [415, 400, 'INVALID_ARGUMENT'],
    [422, 400, 'FAILED_PRECONDITION'],
    [499, 499, 'CANCELLED'],
    [500, 500, 'INTERNAL'],
    [502, 503, 'UNAVAILABLE'],
    [503, 503, 'UNAVAILABLE'],
    [504, 504, 'DEADLINE_EXCEEDED'],
  ])('renders a Google error for status %i as %i %s, and answers it with that status', (status, code, name) => {
    expect(gemini.errorBody({ status, code: 'not_found', message: 'm', param: 'model' })).toEqual({
      error: { code, message: 'm', status: name },
    })
    expect(gemini.errorStatus?.(status)).toBe(code)
  })

  // Every status the gateway answers with (STATUS_BY_CODE), and any an upstream may send that is translated.
  const statuses = [...new Set([...Object.values(STATUS_BY_CODE), ...Array.from({ length: 200 }, (_, i) => 400 + i)])]

  it.each(statuses)('pairs status %i with a name google.rpc.Code maps to the same HTTP status, and answers with it', (status) => {
    const own = gemini.errorBody({ status, code: 'internal_error', message: 'm', param: undefined }) as GoogleError
    expect(HTTP_BY_CODE_NAME[own.error.status]).toBe(own.error.code)
    expect(gemini.errorStatus?.(status)).toBe(own.error.code)
    // A translated upstream error is written the same way.
    expect(generateContent.hub?.errorFromHub(status, { message: 'm', code: undefined, param: undefined })).toEqual(own)
  })

  it('leaves the status of an OpenAI error as it is', () => {
    expect(openai.errorStatus).toBeUndefined()
  })
})

describe('Anthropic errors', () => {
  it("renders Anthropic's shape: the error type by status, and the request id (null when none is known)", () => {
    expect(anthropic.errorBody({ status: 401, code: 'invalid_api_key', message: 'no', param: undefined, requestId: 'R1' })).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'no' },
      request_id: 'R1',
    })
    expect(anthropic.errorBody({ status: 529, code: 'overloaded', message: 'busy', param: undefined })).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'busy' },
      request_id: null,
    })
  })
})

describe('the event that ends a stream early, per operation', () => {
  const broken = { status: 502, code: 'upstream_stream_broken', message: 'cut', param: undefined, requestId: 'R1' } as const

  it('is an `error` event with the Messages error body for Anthropic clients (the SDK skips events without a name)', () => {
    expect(messages.streamErrorEvent?.(broken, 7)).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"cut"},"request_id":"R1"}\n\n',
    )
  })

  it('is a ResponseErrorEvent numbered after the events before it for Responses clients, who count theirs', () => {
    expect(responses.countsStreamEvents).toBe(true)
    expect(responses.streamErrorEvent?.(broken, 12)).toBe(
      'event: error\ndata: {"type":"error","code":"upstream_stream_broken","message":"cut","param":null,"sequence_number":12}\n\n',
    )
  })

  it("is left to the dialect's error body for chat completions and generate-content: their events are unnamed", () => {
    expect(chatCompletions.streamErrorEvent).toBeUndefined()
    expect(generateContent.streamErrorEvent).toBeUndefined()
    expect(messages.countsStreamEvents).toBeUndefined()
  })
})

describe('client keys', () => {
  const none = new URLSearchParams()
  it('reads a Bearer key for OpenAI clients, and nothing else', () => {
    expect(openai.clientKey({ authorization: 'Bearer sk-1' }, none)).toBe('sk-1')
    expect(openai.clientKey({ authorization: 'bearer \tsk-1 ' }, none)).toBe('sk-1')
    expect(openai.clientKey({ authorization: 'Basic abc' }, none)).toBeUndefined()
    expect(openai.clientKey({ 'x-goog-api-key': 'k' }, new URLSearchParams('key=k'))).toBeUndefined()
  })

  it('reads x-api-key first, then Bearer, for Anthropic clients (Claude Code may send both)', () => {
    expect(anthropic.clientKey({ 'x-api-key': ' sk-a ', authorization: 'Bearer sk-b' }, none)).toBe('sk-a')
    expect(anthropic.clientKey({ authorization: 'Bearer sk-b' }, none)).toBe('sk-b')
    expect(anthropic.clientKey({ 'x-api-key': '', authorization: 'Bearer sk-b' }, none)).toBe('sk-b')
    expect(anthropic.clientKey({}, none)).toBeUndefined()
  })

  it('reads x-goog-api-key first, then ?key=, then Bearer for Google clients', () => {
    const query = new URLSearchParams('key=from-query')
    expect(gemini.clientKey({ 'x-goog-api-key': ' from-header ', authorization: 'Bearer b' }, query)).toBe('from-header')
    expect(gemini.clientKey({ 'x-goog-api-key': '  ', authorization: 'Bearer b' }, query)).toBe('from-query')
    expect(gemini.clientKey({ authorization: 'Bearer b' }, none)).toBe('b')
  })
})

describe('upstream side', () => {
  it('builds each format’s path and auth headers', () => {
    expect(openai.upstreamPath('/v1', 'gpt-4o-mini', 'chat.completions', true)).toBe('/v1/chat/completions')
    expect(openai.upstreamPath('/v1', 'gpt-4o-mini', 'responses', true)).toBe('/v1/responses')
    // A Google client's call reaches an OpenAI upstream translated into chat completions.
    expect(openai.upstreamPath('/v1', 'gpt-4o-mini', 'generateContent', false)).toBe('/v1/chat/completions')
    expect(gemini.upstreamPath('', 'gemini-2.5-flash', 'generateContent', false)).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    expect(gemini.upstreamPath('/p', 'g', 'generateContent', true)).toBe('/p/v1beta/models/g:streamGenerateContent?alt=sse')
    // A chat call translated for a Gemini upstream generates content there.
    expect(gemini.upstreamPath('', 'g', 'chat.completions', false)).toBe('/v1beta/models/g:generateContent')
    expect(openai.upstreamPath('/v1', 'e', 'embeddings', false)).toBe('/v1/embeddings')
    for (const method of ['embedContent', 'batchEmbedContents', 'countTokens'] as const) {
      expect(gemini.upstreamPath('', 'e', method, false)).toBe(`/v1beta/models/e:${method}`)
    }
    expect(openai.upstreamAuthHeaders('k')).toEqual({ authorization: 'Bearer k' })
    expect(gemini.upstreamAuthHeaders('k')).toEqual({ 'x-goog-api-key': 'k' })
  })

  it('normalises base paths: no trailing slash, and no copied /v1beta for Gemini', () => {
    expect(openai.upstreamBasePath('/v1/')).toBe('/v1')
    expect(openai.upstreamBasePath('/v1beta')).toBe('/v1beta')
    expect(gemini.upstreamBasePath('/v1beta/')).toBe('')
    expect(gemini.upstreamBasePath('/proxy/v1beta')).toBe('/proxy')
  })

  it('accepts only plain Gemini model names upstream', () => {
    expect(gemini.upstreamModelProblem('gemini-2.5-flash')).toBeUndefined()
    expect(gemini.upstreamModelProblem('../x')).toMatch(/plain Gemini model name/)
    expect(openai.upstreamModelProblem('org/model:v1')).toBeUndefined()
  })
})

describe('operation formats', () => {
  it('takes a chat call’s model and stream flag from its body', () => {
    expect(chatCompletions.read({ model: 'm', messages: [{ role: 'user' }], stream: true }, undefined)).toEqual({
      model: 'm',
      stream: true,
    })
    expect(() => chatCompletions.read({ messages: [{ role: 'user' }] }, undefined)).toThrow(GatewayError)
  })

  it('takes a generate-content call’s model and stream flag from its path, after checking the body', () => {
    const target = { model: 'g', stream: true }
    expect(generateContent.read({ contents: [{ parts: [] }] }, target)).toBe(target)
    expect(() => generateContent.read({ contents: [] }, target)).toThrow(/contents/)
  })

  it('takes a Responses call’s model and stream flag from its body, and checks what the gateway reads', () => {
    expect(responses.read({ model: 'm', input: 'hi', stream: true }, undefined)).toEqual({ model: 'm', stream: true })
    expect(responses.read({ model: 'm', input: [{ role: 'user', content: 'hi' }] }, undefined)).toEqual({ model: 'm', stream: false })
    // A stored prompt or conversation may supply the input upstream.
    expect(responses.read({ model: 'm', prompt: { id: 'p' } }, undefined)).toEqual({ model: 'm', stream: false })
    for (const [fields, param] of [
      [{ input: 'hi' }, 'model'],
      [{ model: 'm', input: 3 }, 'input'],
      [{ model: 'm', input: ['hi'] }, 'input[0]'],
      [{ model: 'm', input: 'hi', stream: 'yes' }, 'stream'],
      [{ model: 'm', input: 'hi', temperature: 3 }, 'temperature'],
      [{ model: 'm', input: 'hi', max_output_tokens: 0 }, 'max_output_tokens'],
    ] as const) {
      expect(() => responses.read(fields, undefined)).toThrow(expect.objectContaining({ code: 'invalid_request', param }))
    }
  })

  it('reads usage from chat completions, Responses objects and Responses stream events alike', () => {
    expect(openai.usage({ usage: { prompt_tokens: 3, completion_tokens: 4 } })).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      total_tokens: 7,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
    expect(openai.usage({ object: 'response', usage: { input_tokens: 5, output_tokens: 6 } })).toEqual({
      input_tokens: 5,
      output_tokens: 6,
      total_tokens: 11,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
    expect(openai.usage({ type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 2 } } })).toEqual({
      input_tokens: 1,
      output_tokens: 2,
      total_tokens: 3,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
    expect(openai.usage({ type: 'response.created', response: { usage: null } })).toBeUndefined()
    expect(openai.usage({ choices: [], usage: null })).toBeUndefined()
  })
})

describe('passthrough-only operations', () => {
  it('take an embeddings call’s model from its body and need an input', () => {
    expect(embeddings.read({ model: 'e', input: ['a'] }, undefined)).toEqual({ model: 'e', stream: false })
    expect(() => embeddings.read({ model: 'e', input: [] }, undefined)).toThrow(/input/)
    expect(() => embeddings.read({ input: 'x' }, undefined)).toThrow(/model/)
  })

  it('take the Gemini methods’ model from the path, after checking the body', () => {
    const target = { model: 'g', stream: false }
    expect(embedContent.read({ content: { parts: [] } }, target)).toBe(target)
    expect(() => embedContent.read({ content: 'x' }, target)).toThrow(/content/)
    expect(batchEmbedContents.read({ requests: [{ content: {} }] }, target)).toBe(target)
    expect(() => batchEmbedContents.read({ requests: [] }, target)).toThrow(/requests/)
    expect(countTokens.read({ contents: [] }, target)).toBe(target)
    expect(countTokens.read({ generate_content_request: {} }, target)).toBe(target)
    expect(() => countTokens.read({}, target)).toThrow(/contents/)
  })

  it('refuse a model of the other format, where chat and generate-content translate', () => {
    expect(chatCompletions.untranslated).toBeUndefined()
    expect(generateContent.untranslated).toBeUndefined()
    expect(otherFormatRefusal(chatCompletions, openai, 'g', gemini)).toBeUndefined()
    expect(otherFormatRefusal(embeddings, openai, 'g', gemini)).toContain('call POST /v1beta/models/g:embedContent')
    expect(otherFormatRefusal(embedContent, gemini, 'o', openai)).toContain('call POST /v1/embeddings for it')
    expect(otherFormatRefusal(countTokens, gemini, 'a', azure)).toContain(
      'serves models of Gemini and OpenAI-compatible and Anthropic and Vertex AI and Bedrock upstreams only; Azure OpenAI upstreams have no route for token counts',
    )
  })

  it('say what a refused model is and serves, never pointing to a route that refuses it too', () => {
    const claude = 'claude-sonnet-4-6'
    const onEmbeddings = otherFormatRefusal(embeddings, openai, claude, anthropic)
    expect(onEmbeddings).toBe(
      `The model '${claude}' is served by an Anthropic upstream, and embeddings are not translated between formats: ` +
        'POST /v1/embeddings serves models of OpenAI-compatible upstreams only; Anthropic upstreams have no route for embeddings. ' +
        `The model '${claude}' serves POST /v1/chat/completions, POST /v1/responses, ` +
        `POST /v1beta/models/${claude}:generateContent, POST /v1beta/models/${claude}:streamGenerateContent?alt=sse, ` +
        `POST /v1beta/models/${claude}:countTokens, POST /v1/messages, POST /v1/messages/count_tokens, ` +
        `POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/${claude}:{rawPredict|streamRawPredict}, ` +
        `POST /v1/projects/{p}/locations/{l}/publishers/google/models/${claude}:{generateContent|streamGenerateContent?alt=sse}, ` +
        `POST /model/${claude}/{invoke|invoke-with-response-stream}, POST /model/${claude}/{converse|converse-stream}, ` +
        `POST /model/${claude}/count-tokens.`,
    )
    // Azure counts no tokens, by any route: the refusal sends nobody to another count.
    const onCount = otherFormatRefusal(countTokens, gemini, 'a', azure)
    expect(onCount).toContain('Azure OpenAI upstream, and token counts are not translated between formats')
    expect(onCount).not.toContain('count_tokens')
    expect(onCount).not.toContain('count-tokens')
    expect(otherFormatRefusal(embedContent, gemini, claude, anthropic)).toContain('Anthropic upstreams have no route for embeddings')
    expect(otherFormatRefusal(messagesCountTokens, anthropic, 'o', openai)).toContain(
      'OpenAI-compatible upstreams have no route for token counts',
    )
  })

  it('keep every answer a client left but a token count', () => {
    expect([chatCompletions, generateContent, embeddings, embedContent, batchEmbedContents].every((f) => f.keepsRecords)).toBe(true)
    expect(countTokens.keepsRecords).toBe(false)
  })

  it('rename the model where a Gemini body names it, in either spelling, and leave other names alone', () => {
    expect(embedContent.renameInBody?.('{"model": "models/a", "content": {}}', 'a', 'b')).toBe('{"model": "models/b", "content": {}}')
    expect(embedContent.renameInBody?.('{"model":"a"}', 'a', 'b')).toBe('{"model":"b"}')
    const batch = '{"requests":[{"model":"models/a","content":{"parts":[{"text":"models/a"}]}},{"model":"models/other"}]}'
    expect(batchEmbedContents.renameInBody?.(batch, 'a', 'b')).toBe(
      '{"requests":[{"model":"models/b","content":{"parts":[{"text":"models/a"}]}},{"model":"models/other"}]}',
    )
    expect(countTokens.renameInBody?.('{"generate_content_request":{"model":"models/a"}}', 'a', 'b')).toBe(
      '{"generate_content_request":{"model":"models/b"}}',
    )
    expect(countTokens.renameInBody?.('{"contents":[{"model":"models/a"}]}', 'a', 'b')).toBe('{"contents":[{"model":"models/a"}]}')
  })
})
