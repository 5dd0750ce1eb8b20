// How the mock upstream answers each operation the registry's routes lead to (routes.ts): the provider family whose
// key check and error bodies the call takes, whether it streams, and its answer. Keyed by operation, so that a new
// dialect's calls need an entry here and no branch in the server's routing. Vertex AI's operations have none: its
// paths are checked and rewritten to the Gemini or Anthropic call they stand for before any route is matched.
import type { ServerResponse } from 'node:http'
import type { Operation } from '../dialects/names.js'
import type { PathParams } from '../http/path-pattern.js'
import { answerCountTokens as answerAnthropicCount } from './anthropic.js'
import { answerMessages } from './anthropic-messages.js'
import { answerGenerate, type GeminiRoute } from './gemini.js'
import { answerCountTokens, answerEmbed } from './gemini-methods.js'
import { answerChat, answerEmbeddings } from './openai.js'
import type { State } from './respond.js'
import { answerInputTokens, answerResponses } from './responses.js'
import type { JsonObject } from './shared.js'

/** A model call the mock recognised by its path (routes.ts): how it is answered, and what the path said. */
export interface MockCall {
  readonly answer: MockOperation
  /** What the route pattern read (`model`). */
  readonly params: PathParams
  /** The last segment of the path's method part (`streamGenerateContent`, `converse-stream`): which variant is asked. */
  readonly verb: string
}

/** What one answer is given: the call as routed, its body and controls, the query, the request's `anthropic-version`. */
export interface MockAnswerArgs {
  call: MockCall
  pathname: string
  body: JsonObject
  ctl: JsonObject
  params: URLSearchParams | null
  version: unknown
  res: ServerResponse
  st: State
  nextSeq: () => number
}

/** The families of providers whose key checks, body errors and error bodies the mock answers in. */
export type MockFamily = 'openai' | 'gemini' | 'anthropic'

/** How the mock answers one operation; `bedrock` for Bedrock's, answered whole by bedrock.ts (SigV4 included). */
export type MockOperation =
  | { readonly family: 'bedrock' }
  | {
      readonly family: MockFamily
      /** Whether the call streams, read from its body and path. @default false */
      streams?(body: JsonObject, call: MockCall): boolean
      answer(args: MockAnswerArgs): void
    }

/** A Gemini call's route as the Gemini answers read it. */
const geminiRoute = ({ call, pathname }: MockAnswerArgs): GeminiRoute => [pathname, call.params.model ?? '', call.verb]

const bodyStreams = (body: JsonObject): boolean => body.stream === true

const BEDROCK: MockOperation = { family: 'bedrock' }

/** Each operation's answer, by the operation its route serves. */
export const MOCK_OPERATIONS: Partial<Readonly<Record<Operation, MockOperation>>> = {
  'chat.completions': {
    family: 'openai',
    streams: bodyStreams,
    answer: (a) => answerChat(a.body, a.ctl, a.res, a.st, a.nextSeq),
  },
  responses: { family: 'openai', streams: bodyStreams, answer: (a) => answerResponses(a.body, a.ctl, a.res, a.st, a.nextSeq) },
  embeddings: { family: 'openai', answer: (a) => answerEmbeddings(a.body, a.ctl, a.res, a.st) },
  messages: {
    family: 'anthropic',
    streams: bodyStreams,
    answer: (a) => answerMessages(a.body, a.ctl, a.version, a.res, a.st, a.nextSeq),
  },
  'messages.countTokens': { family: 'anthropic', answer: (a) => answerAnthropicCount(a.body, a.version, a.res, a.st) },
  generateContent: {
    family: 'gemini',
    streams: (_body, call) => call.verb === 'streamGenerateContent',
    answer: (a) => answerGenerate(geminiRoute(a), a.params, a.body, a.ctl, a.res, a.st, a.nextSeq),
  },
  embedContent: { family: 'gemini', answer: (a) => answerEmbed(geminiRoute(a), a.body, a.res, a.st) },
  batchEmbedContents: { family: 'gemini', answer: (a) => answerEmbed(geminiRoute(a), a.body, a.res, a.st) },
  countTokens: { family: 'gemini', answer: (a) => answerCountTokens(geminiRoute(a), a.body, a.res, a.st) },
  'bedrock.invoke': BEDROCK,
  'bedrock.converse': BEDROCK,
  'bedrock.countTokens': BEDROCK,
}

/**
 * OpenAI's input-token counting, `POST /v1/responses/input_tokens`: an upstream API no client route of the gateway
 * serves (the gateway calls it for a token count translated to an OpenAI model), so no registered pattern names it.
 */
export const INPUT_TOKENS_PATH = '/v1/responses/input_tokens'

/** How the mock answers OpenAI's input-token counting (`INPUT_TOKENS_PATH`). */
export const INPUT_TOKENS: MockOperation = {
  family: 'openai',
  streams: bodyStreams,
  answer: (a) => answerInputTokens(a.body, a.res, a.st),
}
