import type { ModelOptions } from '../../src/types.js'

/**
 * The fixture's models (without their listing dates), a Gemini embedding model the upstream knows by another name
 * (for the calls whose body names the model besides the path), and an embedding model of each format.
 */
export const EMBEDDING_MODELS: ModelOptions[] = [
  { id: 'gpt-4o-mini', upstream: 'mock' },
  { id: 'renamed', upstream: 'mock', upstreamModel: 'upstream-name' },
  { id: 'gemini-2.5-flash', upstream: 'gem' },
  { id: 'gem-embed', upstream: 'gem', upstreamModel: 'gemini-embedding-001' },
  { id: 'text-embedding-3-small', upstream: 'mock' },
  { id: 'gemini-embedding-001', upstream: 'gem' },
]
