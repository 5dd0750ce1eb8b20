// The dialect registry: the one place that maps a configured `type` to the code of its wire format.
import type { Dialect } from './dialect.js'
import { gemini } from './gemini/index.js'
import type { DialectName } from './names.js'
import { openai } from './openai/index.js'

const REGISTRY: Readonly<Record<DialectName, Dialect>> = { openai, gemini }

/** The dialect of a configured upstream `type`, or undefined when there is none by that name. */
export function dialectNamed(name: unknown): Dialect | undefined {
  return typeof name === 'string' && Object.hasOwn(REGISTRY, name) ? REGISTRY[name as DialectName] : undefined
}

export type { CallTarget, Dialect, ErrorFacts, ListedModel, OperationFormat } from './dialect.js'
export { batchEmbedContents, countTokens, embedContent, gemini, generateContent, googleStatus, validateGeminiAlt } from './gemini/index.js'
export { DIALECT_NAMES, type DialectName } from './names.js'
export { chatCompletions, embeddings, openai, responses } from './openai/index.js'
