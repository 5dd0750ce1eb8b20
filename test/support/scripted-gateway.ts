import { afterAll, beforeAll } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import type { Gateway, UpstreamOptions } from '../../src/types.js'
import { KEY_A } from './fixture.js'
import type { MountedServer } from './http.js'
import { type ScriptedUpstream, startScriptedUpstream } from './scripted-upstream.js'
import { serve } from './servers.js'

/** A gateway on node:http in front of a scripted upstream: the test decides every byte the upstream sends. */
export interface ScriptedGateway {
  upstream: ScriptedUpstream
  gateway: Gateway
  url: string
}

/**
 * For the tests of the calling block: an OpenAI-format scripted upstream serving model `gpt-4o-mini`, the gateway
 * (client key `KEY_A`) and its server. `upstream` adds to the upstream's options (a key, headers).
 */
export function useScriptedGateway(upstream: Partial<UpstreamOptions> = {}): ScriptedGateway {
  const chain = {} as ScriptedGateway
  let server: MountedServer
  beforeAll(async () => {
    chain.upstream = await startScriptedUpstream()
    chain.gateway = createGateway({
      upstreams: { s: { type: 'openai', baseUrl: `${chain.upstream.url}/v1`, ...upstream } },
      models: [{ id: 'gpt-4o-mini', upstream: 's' }],
      auth: { apiKeys: [KEY_A] },
    })
    server = await serve(nodeHandler(chain.gateway))
    chain.url = server.url
  })
  afterAll(async () => {
    await server.close()
    await chain.gateway.close()
    await chain.upstream.close()
  })
  return chain
}
