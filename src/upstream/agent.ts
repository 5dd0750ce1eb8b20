import { Agent } from 'undici'

/** One keep-alive connection pool per gateway; timeouts come from the gateway's options, not undici's 300 s. */
export function createUpstreamAgent(timeouts: { upstreamMs: number; connectMs: number }): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 10 * 60_000,
    headersTimeout: timeouts.upstreamMs,
    bodyTimeout: timeouts.upstreamMs,
    connect: { timeout: timeouts.connectMs },
  })
}
