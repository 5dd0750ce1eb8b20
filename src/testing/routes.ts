// The mock upstream's model calls, routed by the dialects' own route patterns (the registry's `MODEL_ROUTES`): the
// paths the gateway serves its clients on are the providers' paths, which the mock answers as the provider. A new
// dialect's paths reach the mock through the registry; the mock needs only an answer for its operations
// (`MOCK_OPERATIONS`, operations.ts). Paths no client route names stay explicit: OpenAI's input-token counting here,
// and in server.ts Azure's `/openai/…` (an upstream-only dialect, with no routes), Vertex AI's (its token endpoint and
// token check come first, and rewrite the call to the Gemini or Anthropic one it stands for) and the model lists.
import { MODEL_ROUTES } from '../dialects/index.js'
import type { Operation } from '../dialects/names.js'
import { PathPattern } from '../http/path-pattern.js'
import { INPUT_TOKENS, INPUT_TOKENS_PATH, MOCK_OPERATIONS, type MockCall } from './operations.js'

// Compiled once: the mock is started many times per test run.
const PATTERNS: ReadonlyArray<{ pattern: PathPattern; operation: Operation }> = MODEL_ROUTES.map((route) => ({
  pattern: new PathPattern(route.path),
  operation: route.format.operation,
}))

/** The last segment of a path's method part: after its last `/` or `:`. */
function verbOf(pathname: string): string {
  return pathname.slice(Math.max(pathname.lastIndexOf('/'), pathname.lastIndexOf(':')) + 1)
}

/** The model call a request is, by the first registered route whose pattern its path matches; undefined: none. */
export function mockCall(method: string, pathname: string): MockCall | undefined {
  if (method !== 'POST') return undefined
  if (pathname === INPUT_TOKENS_PATH) return { answer: INPUT_TOKENS, params: {}, verb: verbOf(pathname) }
  for (const { pattern, operation } of PATTERNS) {
    const params = pattern.match(pathname)
    const answer = MOCK_OPERATIONS[operation]
    if (params !== undefined && answer !== undefined) return { answer, params, verb: verbOf(pathname) }
  }
  return undefined
}
