// A gateway in front of the mock upstream's Responses API with no request log (`record: false`), for the background
// tests that measure memory: started before the calling file's tests and closed after them.
import { afterAll, beforeAll } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from './fixture.js'
import type { MountedServer } from './http.js'
import { serve } from './servers.js'

/** What the calling file's tests use, filled in before they run. */
export interface ResponsesGateway {
  mock: MockUpstream
  gateway: Gateway
  server: MountedServer
}

/** One `gpt-4o-mini` on the mock for `KEY_A` (`overrides` replace top-level options); closed with `closeTimeoutMs`. */
export function useResponsesGateway(overrides: Partial<GatewayOptions> = {}, closeTimeoutMs?: number): ResponsesGateway {
  const held = {} as ResponsesGateway
  beforeAll(async () => {
    held.mock = await startMockUpstream({ apiKey: UPSTREAM_KEY, record: false })
    held.gateway = createGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${held.mock.url}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      auth: { apiKeys: [KEY_A] },
      ...overrides,
    })
    held.server = await serve(nodeHandler(held.gateway))
  })
  afterAll(async () => {
    await held.server?.close()
    await held.gateway?.close(closeTimeoutMs === undefined ? undefined : { timeoutMs: closeTimeoutMs })
    await held.mock?.close()
  })
  return held
}
