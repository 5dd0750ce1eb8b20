import { describe, expect, it } from 'vitest'
import { MODEL_CALL_PATH_ENDINGS } from '../../src/client/model-paths.js'
import { resolveCors } from '../../src/config/cors.js'
import { azure } from '../../src/dialects/azure/index.js'
import { bedrockAnthropic } from '../../src/dialects/bedrock/anthropic.js'
import {
  anthropic,
  CLIENT_HEADERS,
  DIALECTS,
  gemini,
  MODEL_ROUTES,
  OPERATIONS,
  OTEL_OPERATION_NAMES,
  openai,
  REQUEST_ID_HEADERS,
  servedOperations,
  speaksAs,
  translatorFor,
} from '../../src/dialects/index.js'
import { matchRequest } from '../../src/http/router.js'

/** How a route's path ends below its version prefix: what the client matches a URL by. */
const endingOf = (path: string) => {
  const at = path.indexOf('{model}')
  return at === -1 ? path.replace(/^\/v1(?:beta)?/, '') : path.slice(at + '{model}'.length)
}

describe('what derives from the dialect registry', () => {
  it("the client's path endings are exactly the registry's calls that generate an answer in SSE", () => {
    // The client resumes streams as SSE: calls framed otherwise (Bedrock's event streams) are left to their SDKs.
    const sse = MODEL_ROUTES.filter((route) => route.format.hub !== undefined && route.format.framing?.writer === undefined)
    const generating = new Set(sse.map((route) => endingOf(route.path)))
    expect(new Set(MODEL_CALL_PATH_ENDINGS)).toEqual(generating)
  })

  it('the router serves every route of every dialect, in that dialect', () => {
    for (const route of MODEL_ROUTES) {
      const match = matchRequest('POST', route.path.replace('{model}', 'some-model'), false)
      expect(match?.route).toMatchObject({ kind: 'call', route: { path: route.path } })
      expect(match?.dialect).toBe(route.dialect)
      // Another method on the same path is refused in the call's own dialect.
      const wrong = matchRequest('GET', route.path.replace('{model}', 'some-model'), false)
      expect(wrong?.route).toMatchObject({ kind: 'method_not_allowed', allow: 'POST' })
      expect(wrong?.dialect).toBe(route.dialect)
    }
  })

  it("a model serves its upstream dialect's operations and the translated ones, never another's embeddings or counts", () => {
    expect([...servedOperations(gemini)].sort()).toEqual(
      [
        'batchEmbedContents',
        'bedrock.converse',
        'bedrock.countTokens',
        'bedrock.invoke',
        'chat.completions',
        'countTokens',
        'embedContent',
        'generateContent',
        'messages',
        'messages.countTokens',
        'responses',
        'vertex.countTokens',
        'vertex.rawPredict',
      ].sort(),
    )
    expect([...servedOperations(openai)].sort()).toEqual(
      [
        'bedrock.converse',
        'bedrock.countTokens',
        'bedrock.invoke',
        'chat.completions',
        'countTokens',
        'embeddings',
        'generateContent',
        'messages',
        'messages.countTokens',
        'responses',
        'vertex.countTokens',
        'vertex.rawPredict',
      ].sort(),
    )
    // Azure speaks OpenAI's formats, but has no input-token counting.
    expect([...servedOperations(azure)].sort()).toEqual(
      [
        'bedrock.converse',
        'bedrock.invoke',
        'chat.completions',
        'embeddings',
        'generateContent',
        'messages',
        'responses',
        'vertex.rawPredict',
      ].sort(),
    )
    // Claude on Bedrock counts through Bedrock's CountTokens, whatever the client's count: its counting method.
    expect([...servedOperations(bedrockAnthropic)].filter((operation) => OPERATIONS.get(operation)?.countsTokens).sort()).toEqual(
      ['bedrock.countTokens', 'countTokens', 'messages.countTokens', 'vertex.countTokens'].sort(),
    )
    expect(servedOperations(anthropic).has('countTokens')).toBe(true)
    for (const dialect of DIALECTS) {
      for (const route of MODEL_ROUTES) {
        // A count is served through the upstream's own counting method where it has one (Gemini's :countTokens,
        // OpenAI's input_tokens, Anthropic's count_tokens).
        if (!speaksAs(route.dialect, dialect) && route.format.untranslated)
          expect(servedOperations(dialect).has(route.format.operation)).toBe(
            route.format.counting !== undefined && dialect.countingApi !== undefined,
          )
      }
    }
  })

  it('the token counts, free upstream and never kept, are the operations that count against no limit', () => {
    const counts = MODEL_ROUTES.filter((route) => route.format.countsTokens === true).map((route) => route.format.operation)
    expect(new Set(counts)).toEqual(new Set(['countTokens', 'messages.countTokens', 'vertex.countTokens', 'bedrock.countTokens']))
    for (const route of MODEL_ROUTES) if (route.format.countsTokens) expect(route.format.keepsRecords).toBe(false)
  })

  it("CORS allows every dialect's client headers, those of the variants serving some routes too", () => {
    const cors = resolveCors({ origins: '*' })
    for (const dialect of DIALECTS) for (const header of dialect.clientHeaders) expect(cors?.allowHeaders.has(header)).toBe(true)
    for (const route of MODEL_ROUTES) for (const header of route.dialect.clientHeaders) expect(cors?.allowHeaders.has(header)).toBe(true)
    for (const route of MODEL_ROUTES) if (route.dialect.requestIdHeader) expect(REQUEST_ID_HEADERS).toContain(route.dialect.requestIdHeader)
    // The AWS SDK's retry marker, sent by a variant's clients only.
    expect(CLIENT_HEADERS).toContain('amz-sdk-request')
    expect(CLIENT_HEADERS.length).toBe(new Set(CLIENT_HEADERS).size)
  })

  it('every operation has its OpenTelemetry name', () => {
    for (const route of MODEL_ROUTES) expect(OTEL_OPERATION_NAMES.get(route.format.operation)).toBe(route.format.otelName)
    expect(OTEL_OPERATION_NAMES.get('chat.completions')).toBe('chat')
    expect(OTEL_OPERATION_NAMES.get('generateContent')).toBe('generate_content')
  })

  it('translates an operation with a hub (or a count to a counting method) between any two dialects, and only then', () => {
    for (const route of MODEL_ROUTES) {
      for (const outbound of DIALECTS) {
        const translator = translatorFor(route.dialect, outbound, route.format.operation)
        const translated = route.format.hub ?? (outbound.countingApi && route.format.counting)
        if (speaksAs(route.dialect, outbound) || !translated) expect(translator).toBeUndefined()
        else expect(translator).toBeDefined()
      }
    }
  })
})
