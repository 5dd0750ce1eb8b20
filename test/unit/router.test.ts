import { describe, expect, it } from 'vitest'
import type { CallTarget } from '../../src/dialects/index.js'
import {
  anthropic,
  batchEmbedContents,
  chatCompletions,
  countTokens,
  embedContent,
  embeddings,
  gemini,
  generateContent,
  type OperationFormat,
  openai,
  responses,
} from '../../src/dialects/index.js'
import { matchRequest, normalisePrefix, pathUnderPrefix, underOwnPrefix, unknownPathMessage } from '../../src/http/router.js'

/** A model call of `format`, with what its path says. */
const call = (format: OperationFormat, target?: CallTarget) => ({ kind: 'call', route: { format }, target })

describe('matchRequest', () => {
  it.each([
    ['GET', '/v1/models', { kind: 'models' }],
    ['POST', '/v1/chat/completions', call(chatCompletions)],
    ['POST', '/v1/responses', call(responses)],
    ['GET', '/v1/recoveries', { kind: 'recoveries.list' }],
    ['DELETE', '/v1/recoveries?all=true', { kind: 'recoveries.deleteAll' }],
    ['POST', '/v1/recoveries/lookup', { kind: 'recoveries.lookup' }],
    ['GET', '/v1/recoveries/01ARZ3NDEKTSV4RRFFQ69G5FAV', { kind: 'recoveries.get', requestId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }],
    ['DELETE', '/v1/recoveries/x', { kind: 'recoveries.delete', requestId: 'x' }],
    ['POST', '/v1beta/models/gemini-2.5-flash:generateContent', call(generateContent, { model: 'gemini-2.5-flash', stream: false })],
    [
      'POST',
      '/v1/models/google/gemini-2.5-flash:streamGenerateContent?alt=sse',
      call(generateContent, { model: 'google/gemini-2.5-flash', stream: true }),
    ],
    ['POST', '/v1/embeddings', call(embeddings)],
    ['POST', '/v1beta/models/e:embedContent', call(embedContent, { model: 'e', stream: false })],
    ['POST', '/v1/models/e:batchEmbedContents', call(batchEmbedContents, { model: 'e', stream: false })],
    ['POST', '/v1beta/models/g:countTokens', call(countTokens, { model: 'g', stream: false })],
  ])('%s %s routes to %j', (method, url, route) => {
    const matched = matchRequest(method, url, false)?.route
    expect(matched).toMatchObject(route)
    // The route's format is the very one its dialect declares, not a copy.
    if (matched?.kind === 'call') expect(matched.route.format).toBe((route as ReturnType<typeof call>).route.format)
  })

  it('reads a model segment up to its first colon only, as a path that names a method on it', () => {
    // Under the gateway's own prefix, so its 404 rather than a route.
    const notFound = { kind: 'not_found' }
    expect(matchRequest('POST', '/v1beta/models/:generateContent', false)?.route).toEqual(notFound)
    expect(matchRequest('POST', '/v1beta/models/a:b:generateContent', false)?.route).toEqual(notFound)
    expect(matchRequest('POST', '/v1beta/models/a:generateContentX', false)?.route).toEqual(notFound)
    expect(matchRequest('POST', '/v2/models/a:generateContent', false)).toBeUndefined()
  })

  it('answers a known path with the wrong method as method_not_allowed, naming the allowed ones', () => {
    expect(matchRequest('PUT', '/v1/recoveries', false)?.route).toEqual({ kind: 'method_not_allowed', allow: 'GET, DELETE' })
    const post = { kind: 'method_not_allowed', allow: 'POST' }
    expect(matchRequest('GET', '/v1/chat/completions', false)?.route).toEqual({ ...post, dialect: openai })
    expect(matchRequest('GET', '/v1/embeddings', false)?.route).toEqual({ ...post, dialect: openai })
    expect(matchRequest('GET', '/v1beta/models/g:countTokens', false)?.route).toEqual({ ...post, dialect: gemini })
    expect(matchRequest('GET', '/v1/models/g:countTokens', false)?.dialect).toBe(gemini)
    expect(matchRequest('GET', '/v1/responses', false)?.route).toEqual({ ...post, dialect: openai })
  })

  it('names POST /v1/responses among the routes served, and hints at a base URL without /v1', () => {
    expect(unknownPathMessage('GET', '/v1/nothing')).toContain('POST /v1/responses')
    expect(unknownPathMessage('POST', '/responses')).toContain('Is the base URL missing /v1?')
  })

  it('leaves unknown paths to the host unless told to claim them', () => {
    expect(matchRequest('GET', '/v1/nothing', false)).toBeUndefined()
    expect(matchRequest('GET', '/v1/nothing', true)?.route).toEqual({ kind: 'not_found' })
  })

  it('claims an unknown path under its own route prefixes, or doubling the version, even when the host has the rest', () => {
    for (const path of [
      '/v1/chat/completion',
      '/v1/chat',
      '/v1/v1/chat/completions',
      '/v1beta/v1beta/models/g:generateContent',
      '/v1/v1',
      '/v1/messages/count-tokens',
      '/v1/health/',
      '/v1beta/no/such/path',
      '/v1beta/models/g:generate',
      '/v1beta1/projects/p/locations/l/endpoints/e:predict',
      '/model/m/bogus',
    ]) {
      expect(underOwnPrefix(path), path).toBe(true)
      expect(matchRequest('POST', path, false)?.route, path).toEqual({ kind: 'not_found' })
    }
    for (const path of [
      '/v1/nothing',
      '/v1/users',
      '/v1/chatroom',
      '/v1/modelsx',
      '/v1',
      '/v2/chat/completions',
      '/chat/completions',
      '/',
    ]) {
      expect(underOwnPrefix(path), path).toBe(false)
      expect(matchRequest('POST', path, false), path).toBeUndefined()
    }
  })

  it('gives Google-format paths the gemini dialect and every other path the openai dialect, unless its client says another', () => {
    expect(matchRequest('GET', '/v1beta/anything', true)?.dialect).toBe(gemini)
    expect(matchRequest('POST', '/v1/models/m:generateContent', true)?.dialect).toBe(gemini)
    expect(matchRequest('POST', '/v1/models/m:embedContent', true)?.dialect).toBe(gemini)
    expect(matchRequest('POST', '/v1/models/m:countTokens', true)?.dialect).toBe(gemini)
    expect(matchRequest('POST', '/v1/embeddings', true)?.dialect).toBe(openai)
    expect(matchRequest('GET', '/v1/models', true)?.dialect).toBe(openai)
    expect(matchRequest('GET', '/v1/recoveries', true)?.dialect).toBe(openai)
    expect(matchRequest('GET', '/elsewhere', true)?.dialect).toBe(openai)
    // A path not served answers a client whose headers say its dialect in that dialect; a served one keeps its own.
    const claude = { 'anthropic-version': '2023-06-01' }
    expect(matchRequest('GET', '/v1/messages/batches', true, claude)?.dialect).toBe(anthropic)
    expect(matchRequest('GET', '/v1/models', true, claude)?.dialect).toBe(anthropic)
    expect(matchRequest('GET', '/v1/recoveries', true, claude)?.dialect).toBe(openai)
    expect(matchRequest('POST', '/v1/chat/completions', true, claude)?.dialect).toBe(openai)
  })

  it('answers an unknown path under the beginning only one dialect’s calls have in that dialect', () => {
    for (const path of ['/v1/projects/p/locations/l/publishers/anthropic/models/m:bogus', '/v1beta1/projects/p/x'])
      expect(matchRequest('POST', path, true)?.dialect.name, path).toBe('vertex')
    expect(matchRequest('POST', '/model/m/bogus', true)?.dialect.name).toBe('bedrock')
    // Gemini's calls under the model list every dialect reads go by the client's headers, as the list does.
    expect(matchRequest('POST', '/v1/models/m:bogus', true)?.dialect).toBe(openai)
    expect(matchRequest('POST', '/v1/models/m:bogus', true, { 'x-goog-api-key': 'k' })?.dialect).toBe(gemini)
    expect(matchRequest('POST', '/v1/projectsx', true)?.dialect).toBe(openai)
  })

  it('parses the query and never percent-decodes the model segment', () => {
    const match = matchRequest('POST', '/v1beta/models/a%2Fb:generateContent?key=k&alt=json', false)
    expect(match?.query.get('key')).toBe('k')
    expect(match?.route).toMatchObject(call(generateContent, { model: 'a%2Fb', stream: false }))
  })
})

describe('mount prefixes', () => {
  it('normalises a prefix and cuts it off paths below it, and only those', () => {
    expect(normalisePrefix('/ai///')).toBe('/ai')
    expect(normalisePrefix(undefined)).toBe('')
    expect(pathUnderPrefix('/ai', '/ai/v1/models')).toBe('/v1/models')
    expect(pathUnderPrefix('/ai', '/ai')).toBe('/')
    expect(pathUnderPrefix('/ai', '/ai?x=1')).toBe('/?x=1')
    expect(pathUnderPrefix('/ai', '/aim/v1/models')).toBeUndefined()
    expect(pathUnderPrefix('/ai', '/v1/models')).toBeUndefined()
    expect(pathUnderPrefix('', '/v1/models')).toBe('/v1/models')
  })
})
