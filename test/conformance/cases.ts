// The calls of the conformance matrix: every endpoint the gateway serves model calls on, passthrough and
// translated, whole and streamed, with text and with a tool call, and what each answer must be.
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { goog } from '../support/gemini.js'

/** A model of the fixture's OpenAI-compatible upstream (the mock). */
export const OPENAI_MODEL = 'gpt-4o-mini'
/** A model of the fixture's Gemini upstream (the mock). */
export const GEMINI_MODEL = 'gemini-2.5-flash'

/** How an answer is checked: one JSON body against a schema, or an event stream of a format. */
export type Expect =
  | { kind: 'json'; schema: 'chat' | 'response' | 'generate' | 'embeddings' | 'embed' | 'batchEmbed' | 'countTokens' | 'message' }
  | { kind: 'models'; shape: 'openai-list' | 'openai-model' | 'google-list' | 'google-model' | 'anthropic-list' | 'anthropic-model' }
  | { kind: 'chat-stream'; includeUsage: boolean }
  | { kind: 'responses-stream' | 'gemini-stream' | 'messages-stream' }
  | { kind: 'error'; shape: 'openai' | 'google' | 'anthropic' }

/** One call of the matrix. `steer` is sent to the mock upstream for bodies containing the case's marker. */
export interface Case {
  /** `<endpoint> <passthrough|translated> <json|stream> <variant>`, or `error <shape> <what>`: what quirks go by. */
  name: string
  path: string
  headers: Record<string, string>
  body?: unknown
  /** Mock controls for bodies containing `marker` (a translated body cannot carry the mock's own `mock` field). */
  steer?: Record<string, unknown>
  /** Text only this case's body holds, which `steer` goes by. */
  marker?: string
  /** The status the call is answered with: 200 unless said; for a Google-shaped error, the one its body names. */
  status?: number
  /** A body sent first with the same headers (an Idempotency-Key's first use). */
  prior?: unknown
  /** Send the head and half the body, then nothing: the gateway's body deadline passes. */
  stall?: boolean
  /** The request's method, when not the default (POST with a body, GET without). */
  method?: string
  expect: Expect
}

const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
const chatTools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.', parameters: WEATHER } }]
// As the OpenAI SDK's FunctionTool type has it: `strict` and `parameters` are required there.
const responsesTools = [
  { type: 'function', name: 'get_weather', description: 'The weather in a city.', parameters: WEATHER, strict: false },
]
const geminiTools = [
  { functionDeclarations: [{ name: 'get_weather', description: 'The weather in a city.', parametersJsonSchema: WEATHER }] },
]

/** What an OpenAI client sends its key in. */
export const openaiHeaders = bearer(KEY_A)
/** What a Google client sends its key in. */
export const googleHeaders = goog(KEY_A)

/** Which model a client of `client` calls to stay in its dialect (passthrough) or cross to the other (translated). */
export const modelFor = (client: 'openai' | 'google', mode: string) =>
  (client === 'openai') === (mode === 'passthrough') ? OPENAI_MODEL : GEMINI_MODEL

/** The generate-content path of a model, streamed or not. */
export const generatePath = (model: string, stream: boolean) =>
  `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`

/** The model calls: chat, Responses and generate-content × passthrough/translated × JSON/stream × text/tool. */
export function modelCallCases(): Case[] {
  const cases: Case[] = []
  for (const mode of ['passthrough', 'translated']) {
    for (const variant of ['text', 'tool']) {
      const tool = variant === 'tool'
      const oai = modelFor('openai', mode)
      const gem = modelFor('google', mode)
      const say = `conformance ${mode} ${variant}`
      cases.push({
        name: `chat ${mode} json ${variant}`,
        path: '/v1/chat/completions',
        headers: openaiHeaders,
        body: chatBody(say, { model: oai, ...(tool ? { tools: chatTools } : {}) }),
        expect: { kind: 'json', schema: 'chat' },
      })
      for (const includeUsage of [true, false]) {
        const usage = includeUsage ? { stream_options: { include_usage: true } } : {}
        cases.push({
          name: `chat ${mode} stream ${variant}${includeUsage ? ' usage' : ''}`,
          path: '/v1/chat/completions',
          headers: openaiHeaders,
          body: chatBody(say, { model: oai, stream: true, ...usage, ...(tool ? { tools: chatTools } : {}) }),
          expect: { kind: 'chat-stream', includeUsage },
        })
      }
      for (const stream of [false, true]) {
        cases.push({
          name: `responses ${mode} ${stream ? 'stream' : 'json'} ${variant}`,
          path: '/v1/responses',
          headers: openaiHeaders,
          body: { model: oai, input: say, ...(stream ? { stream: true } : {}), ...(tool ? { tools: responsesTools } : {}) },
          expect: stream ? { kind: 'responses-stream' } : { kind: 'json', schema: 'response' },
        })
        cases.push({
          name: `generate ${mode} ${stream ? 'stream' : 'json'} ${variant}`,
          path: generatePath(gem, stream),
          headers: googleHeaders,
          body: geminiBody(say, tool ? { tools: geminiTools } : {}),
          expect: stream ? { kind: 'gemini-stream' } : { kind: 'json', schema: 'generate' },
        })
      }
    }
  }
  return cases
}

/** Streams the upstream breaks off after two frames: each ends with one error event in the client's format. */
export function brokenStreamCases(): Case[] {
  const cases: Case[] = []
  const steer = { chunks: 6, destroy_after_frames: 2 }
  for (const mode of ['passthrough', 'translated']) {
    const oai = modelFor('openai', mode)
    const say = `conformance ${mode} broken`
    cases.push(
      {
        name: `chat ${mode} stream broken`,
        path: '/v1/chat/completions',
        headers: openaiHeaders,
        body: chatBody(say, { model: oai, stream: true, stream_options: { include_usage: true } }),
        marker: say,
        steer,
        expect: { kind: 'chat-stream', includeUsage: true },
      },
      {
        name: `responses ${mode} stream broken`,
        path: '/v1/responses',
        headers: openaiHeaders,
        body: { model: oai, input: say, stream: true },
        marker: say,
        steer,
        expect: { kind: 'responses-stream' },
      },
      {
        name: `generate ${mode} stream broken`,
        path: generatePath(modelFor('google', mode), true),
        headers: googleHeaders,
        body: geminiBody(say),
        marker: say,
        steer,
        expect: { kind: 'gemini-stream' },
      },
    )
  }
  return cases
}

/**
 * Background responses, passthrough and translated: the object a create answers at once, and the events a streamed
 * create sends (the gateway's own `response.created`, then the upstream's, renumbered, under the create's id).
 */
export function backgroundCases(): Case[] {
  const cases: Case[] = []
  for (const mode of ['passthrough', 'translated']) {
    const model = modelFor('openai', mode)
    const say = `conformance ${mode} background`
    cases.push(
      {
        name: `background create ${mode} json`,
        path: '/v1/responses',
        headers: openaiHeaders,
        body: { model, input: say, background: true },
        expect: { kind: 'json', schema: 'response' },
      },
      {
        // Named as the Responses streams are: the upstream's events carry the same quirks.
        name: `responses ${mode} stream background`,
        path: '/v1/responses',
        headers: openaiHeaders,
        body: { model, input: say, background: true, stream: true },
        expect: { kind: 'responses-stream' },
      },
    )
  }
  return cases
}

/**
 * Embeddings and token counts: passthrough to a model of their own format; embeddings refused (400) for any other,
 * a token count translated to the other's counting method.
 */
export function passthroughOnlyCases(): Case[] {
  const embedBody = { content: { parts: [{ text: 'embed me' }] } }
  const batchBody = (model: string) => ({ requests: [{ model: `models/${model}`, content: { parts: [{ text: 'one' }] } }] })
  const google = (method: string, body: unknown, schema: 'embed' | 'batchEmbed' | 'countTokens'): Case => ({
    name: `${method} passthrough json`,
    path: `/v1beta/models/${GEMINI_MODEL}:${method}`,
    headers: googleHeaders,
    body,
    expect: { kind: 'json', schema },
  })
  return [
    {
      name: 'embeddings passthrough json',
      path: '/v1/embeddings',
      headers: openaiHeaders,
      body: { model: OPENAI_MODEL, input: ['one', 'two'] },
      expect: { kind: 'json', schema: 'embeddings' },
    },
    {
      name: 'embeddings translated refused',
      path: '/v1/embeddings',
      headers: openaiHeaders,
      body: { model: GEMINI_MODEL, input: 'one' },
      status: 400,
      expect: { kind: 'error', shape: 'openai' },
    },
    google('embedContent', embedBody, 'embed'),
    google('batchEmbedContents', batchBody(GEMINI_MODEL), 'batchEmbed'),
    google('countTokens', geminiBody('count me'), 'countTokens'),
    {
      name: 'countTokens translated json',
      path: `/v1beta/models/${OPENAI_MODEL}:countTokens`,
      headers: googleHeaders,
      body: geminiBody('count me'),
      expect: { kind: 'json', schema: 'countTokens' },
    },
    ...(
      [
        ['embedContent', embedBody],
        ['batchEmbedContents', batchBody(OPENAI_MODEL)],
      ] satisfies [string, unknown][]
    ).map(
      ([method, body]): Case => ({
        name: `${method} translated refused`,
        path: `/v1beta/models/${OPENAI_MODEL}:${method}`,
        headers: googleHeaders,
        body,
        status: 400,
        expect: { kind: 'error', shape: 'google' },
      }),
    ),
  ]
}

/** The model lists and single models, in each format (Google clients on `/v1` too). */
export function modelListCases(): Case[] {
  const get = (name: string, path: string, headers: Record<string, string>, shape: Extract<Expect, { kind: 'models' }>['shape']): Case => ({
    name,
    path,
    headers,
    expect: { kind: 'models', shape },
  })
  return [
    get('models openai list', '/v1/models', openaiHeaders, 'openai-list'),
    get('models openai one', `/v1/models/${GEMINI_MODEL}`, openaiHeaders, 'openai-model'),
    get('models google list', '/v1beta/models', googleHeaders, 'google-list'),
    get('models google one', `/v1beta/models/${OPENAI_MODEL}`, googleHeaders, 'google-model'),
    get('models google list under /v1', '/v1/models', googleHeaders, 'google-list'),
    get('models google one under /v1', `/v1/models/${GEMINI_MODEL}`, googleHeaders, 'google-model'),
  ]
}
