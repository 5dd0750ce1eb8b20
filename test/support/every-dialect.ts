import type { UpstreamOptions } from '../../src/types.js'

/** The dialects an upstream of which the mock serves with a key alone (Vertex and Bedrock take credentials of their own). */
type KeyedDialect = 'openai' | 'gemini' | 'anthropic' | 'azure'

/**
 * One upstream of each dialect served with a key, all on the one mock (or scripted) upstream at `url`, keyed by
 * dialect name: the gateway of a test that serves a model of every API dialect.
 */
export function upstreamsOnOneMock(url: string, apiKey?: string): Record<KeyedDialect, UpstreamOptions> {
  const key = apiKey === undefined ? {} : { apiKey }
  return {
    // OpenAI's API, and the mock's, live under `/v1`.
    openai: { type: 'openai', baseUrl: `${url}/v1`, ...key },
    gemini: { type: 'gemini', baseUrl: url, ...key },
    anthropic: { type: 'anthropic', baseUrl: url, ...key },
    // Azure OpenAI's v1 API lives under `/openai/v1`, where the mock serves it too; an Azure upstream always has a
    // credential, loopback or not.
    azure: { type: 'azure', baseUrl: `${url}/openai/v1`, apiKey: apiKey ?? 'sk-mock-azure' },
  }
}
