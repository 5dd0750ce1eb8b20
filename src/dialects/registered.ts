// The registry's one list: every dialect, in order (the first is the default). Adding a dialect is its folder and
// one line here; its name and operation names must be members of `DialectName` and `Operation`, which the compiler
// checks. Everything else derives from this list in index.ts. Tests register a test-only dialect by replacing this
// module (test/fixtures/dialects/registered.ts), so nothing here knows of them.
import { anthropic } from './anthropic/index.js'
import { azure } from './azure/index.js'
import { bedrock } from './bedrock/index.js'
import type { Dialect } from './dialect.js'
import { gemini } from './gemini/index.js'
import { openai } from './openai/index.js'
import { vertex } from './vertex/index.js'

/** The dialects the gateway speaks, in the registry's order. */
export const REGISTERED_DIALECTS: readonly Dialect[] = [openai, gemini, anthropic, azure, vertex, bedrock]
