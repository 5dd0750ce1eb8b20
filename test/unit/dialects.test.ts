import { describe, expect, it } from 'vitest'
import { chatCompletions, DIALECT_NAMES, dialectNamed, gemini, generateContent, openai } from '../../src/dialects/index.js'
import { GatewayError } from '../../src/errors.js'

describe('dialect registry', () => {
  it('maps every configured type to its dialect and nothing else', () => {
    expect(DIALECT_NAMES.map((name) => dialectNamed(name)?.name)).toEqual(['openai', 'gemini'])
    expect(dialectNamed('anthropic')).toBeUndefined()
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
    [400, 'INVALID_ARGUMENT'],
    [401, 'UNAUTHENTICATED'],
    [404, 'NOT_FOUND'],
    [405, 'INVALID_ARGUMENT'],
    [413, 'INVALID_ARGUMENT'],
    [415, 'INVALID_ARGUMENT'],
    [500, 'INTERNAL'],
    [502, 'UNAVAILABLE'],
    [503, 'UNAVAILABLE'],
    [504, 'DEADLINE_EXCEEDED'],
  ])('renders a Google error for status %i as %s', (status, name) => {
    expect(gemini.errorBody({ status, code: 'not_found', message: 'm', param: 'model' })).toEqual({
      error: { code: status, message: 'm', status: name },
    })
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
    expect(gemini.upstreamPath('', 'gemini-2.5-flash', 'generateContent', false)).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    expect(gemini.upstreamPath('/p', 'g', 'generateContent', true)).toBe('/p/v1beta/models/g:streamGenerateContent?alt=sse')
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
})
