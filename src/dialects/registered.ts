// The registry's one list: every dialect, in order (the first is the default). Adding a dialect is its folder (its
// `types.ts` declaring its name, operations and options), its declaration in names.ts and one entry here; the
// compiler rejects an entry under another name than its dialect's, and a declared dialect with no entry. Everything
// else derives from this list in index.ts. Tests register a test-only dialect by replacing this module
// (test/fixtures/dialects/registered.ts), so nothing here knows of them.
import { anthropic } from './anthropic/index.js'
import { azure } from './azure/index.js'
import { bedrock } from './bedrock/index.js'
import type { Dialect } from './dialect.js'
import { gemini } from './gemini/index.js'
import type { DialectName } from './names.js'
import { openai } from './openai/index.js'
import { vertex } from './vertex/index.js'

// Keyed by name so that the compiler checks the list against the declared names both ways; its order is the registry's.
const BY_NAME: { readonly [Name in DialectName]: Dialect<Name> } = { openai, gemini, anthropic, azure, vertex, bedrock }

/** The dialects the gateway speaks, in the registry's order. */
export const REGISTERED_DIALECTS: readonly Dialect[] = Object.values(BY_NAME)
