import { afterAll, beforeAll } from 'vitest'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import type { ServerKind } from './servers.js'

/** Keys of two clients, and the gateway's own key for the mock upstream. */
export const KEY_A = 'sk-test-alice'
export const KEY_B = 'sk-test-bob'
export const UPSTREAM_KEY = 'sk-upstream-secret-0123456789'

/** Authorization header of a client key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** A mock upstream, a gateway in front of it and a real server hosting the gateway. */
export interface Fixture {
  url: string
  gateway: Gateway
  mock: MockUpstream
  logs: Array<{ level: 'info' | 'warn' | 'error'; message: string; meta?: Record<string, unknown> }>
  close(): Promise<void>
}

/**
 * The chain for the tests of the calling block: started before them, closed after them. The object is filled in
 * by the time a test runs, so tests can share it without a variable of their own.
 */
export function useFixture(kind: ServerKind, overrides: Partial<GatewayOptions> = {}): Fixture {
  const fx = {} as Fixture
  beforeAll(async () => {
    Object.assign(fx, await startFixture(kind, overrides))
  })
  afterAll(() => fx.close())
  return fx
}

/** The fixture's upstreams, on the mock upstream at `mockUrl`: its OpenAI side and its Gemini side. */
export const fixtureUpstreams = (mockUrl: string): GatewayOptions['upstreams'] => ({
  mock: { type: 'openai', baseUrl: `${mockUrl}/v1`, apiKey: UPSTREAM_KEY },
  gem: { type: 'gemini', baseUrl: mockUrl, apiKey: UPSTREAM_KEY },
})

/** The fixture's models. */
export const FIXTURE_MODELS: GatewayOptions['models'] = [
  { id: 'gpt-4o-mini', upstream: 'mock', created: 1700000000 },
  { id: 'renamed', upstream: 'mock', upstreamModel: 'upstream-name', ownedBy: 'acme', created: 1700000001 },
  { id: 'gemini-2.5-flash', upstream: 'gem', created: 1700000002 },
]

/**
 * Starts the whole chain on port 0; `overrides` replace top-level gateway options (given the mock upstream's URL,
 * when they name upstreams on it).
 */
export async function startFixture(
  kind: ServerKind,
  overrides: Partial<GatewayOptions> | ((mockUrl: string) => Partial<GatewayOptions>) = {},
): Promise<Fixture> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const logs: Fixture['logs'] = []
  const gateway = createGateway({
    upstreams: fixtureUpstreams(mock.url),
    models: FIXTURE_MODELS,
    auth: { apiKeys: [KEY_A, KEY_B] },
    logger: {
      info: (message, meta) => logs.push({ level: 'info', message, meta }),
      warn: (message, meta) => logs.push({ level: 'warn', message, meta }),
      error: (message, meta) => logs.push({ level: 'error', message, meta }),
    },
    ...(typeof overrides === 'function' ? overrides(mock.url) : overrides),
  })
  const server = await kind.mount(gateway)
  return {
    url: server.url,
    gateway,
    mock,
    logs,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}
