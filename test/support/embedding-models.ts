import type { ModelOptions } from '../../src/types.js'

/**
 * The fixture's models (without their listing dates), and a Gemini embedding model the upstream knows by another
 * name, for the calls whose body names the model besides the path.
 */
export const EMBEDDING_MODELS: ModelOptions[] = [
  { id: 'gpt-4o-mini', upstream: 'mock' },
  { id: 'renamed', upstream: 'mock', upstreamModel: 'upstream-name' },
  { id: 'gemini-2.5-flash', upstream: 'gem' },
  { id: 'gem-embed', upstream: 'gem', upstreamModel: 'gemini-embedding-001' },
]
