import type { DialectName, UpstreamOptions } from '../../src/types.js'

/**
 * One upstream of each dialect, all on the one mock (or scripted) upstream at `url`, keyed by dialect name: the
 * gateway of a test that serves a model of every dialect. Keyed by `DialectName`, so a new dialect is a compile
 * error here until it says where the mock serves it.
 */
export function upstreamsOnOneMock(url: string, apiKey?: string): Record<DialectName, UpstreamOptions> {
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
