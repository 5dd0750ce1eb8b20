// The dialects' names and their operations' names: the unions the rest of the package types itself with, made of
// what each dialect folder declares of itself in its `types.ts` (a leaf, so nothing here imports a dialect). The
// registry (`registered.ts`) is held to these names by the compiler in both directions: a declared dialect it does
// not list, or a listed one under a name not declared, is a type error there.
import type { AnthropicDeclaration } from './anthropic/types.js'
import type { AzureDeclaration } from './azure/types.js'
import type { BedrockDeclaration } from './bedrock/types.js'
import type { GeminiDeclaration } from './gemini/types.js'
import type { OpenAIDeclaration } from './openai/types.js'
import type { VertexDeclaration } from './vertex/types.js'

/** What each dialect declares of itself to the public types: its name, its operations' names, its upstreams' options. */
export type DialectDeclarations =
  | OpenAIDeclaration
  | GeminiDeclaration
  | AnthropicDeclaration
  | AzureDeclaration
  | VertexDeclaration
  | BedrockDeclaration

/** The wire formats the gateway speaks, to clients and to upstreams alike. */
export type DialectName = DialectDeclarations['name']

/**
 * What a model call asks for; the value a record's `request.endpoint` and a usage event's `endpoint` carry. Each is
 * described where its dialect declares it (`<dialect>/types.ts`).
 */
export type Operation = DialectDeclarations['operation']

/** The options only upstreams of the dialect `Name` take, `type` among them (`<dialect>/types.ts`). */
export type DialectOptionFields<Name extends DialectName = DialectName> = Extract<DialectDeclarations, { name: Name }>['options']
