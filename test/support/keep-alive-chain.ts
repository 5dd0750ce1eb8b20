// The chain the keep-alive tests run against: a mock upstream of every format (and, where a test scripts the bytes,
// a scripted one), a gateway with keep-alive options in front, and a real node:http server hosting it.
import { afterAll, beforeAll } from 'vitest'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from './fixture.js'
import type { MountedServer } from './http.js'
import type { ScriptedUpstream } from './scripted-upstream.js'
import { NODE_KINDS } from './servers.js'

/** The comment a quiet stream gets. */
export const KEEP_ALIVE = ': keep-alive\n\n'
const node = NODE_KINDS[0] as (typeof NODE_KINDS)[number]
/** The Claude model the chain configures. */
export const CLAUDE = 'claude-haiku-4-5'
/** The Gemini model the chain configures. */
export const GEMINI = 'gemini-2.5-flash'
/** A first byte after several intervals of 50 ms, and gaps of several intervals between events. */
export const SLOW = { delay_ms: 300, chunks: 3, chunk_delay_ms: 200 }

/** A mock upstream of every format, a gateway in front of it with `options`, and a real server hosting it. */
export interface Chain {
  url: string
  mock: MockUpstream
  gateway: Gateway
  close(): Promise<void>
}

/** Starts the chain; `scripted` adds the model `scripted` on that upstream. */
export async function startChain(options: Partial<GatewayOptions>, scripted?: ScriptedUpstream): Promise<Chain> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const gateway = createGateway({
    upstreams: {
      // A model of its own on an upstream that writes exactly the pieces a test scripts.
      ...(scripted ? { scripted: { type: 'openai' as const, baseUrl: `${scripted.url}/v1` } } : {}),
      oai: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt', upstream: 'oai' },
      { id: GEMINI, upstream: 'gem' },
      { id: CLAUDE, upstream: 'claude' },
      // Its upstream model name is what the mock is steered by: the fallback's request does not carry it.
      { id: 'flaky', upstream: 'oai', upstreamModel: 'flaky-upstream', fallbacks: ['gpt'] },
      ...(scripted ? [{ id: 'scripted', upstream: 'scripted' }] : []),
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { warn: () => {}, error: () => {} },
    ...options,
  })
  const server: MountedServer = await node.mount(gateway)
  return {
    url: server.url,
    mock,
    gateway,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/** The chain for the tests of the calling block: started before them, closed after them. */
export function useChain(options: Partial<GatewayOptions>): Chain {
  const chain = {} as Chain
  beforeAll(async () => {
    Object.assign(chain, await startChain(options))
  })
  afterAll(() => chain.close())
  return chain
}

/** A streamed chat-completions body asking `content` of the model `gpt`. */
export const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt',
  messages: [{ role: 'user' as const, content }],
  stream: true as const,
  ...extra,
})

/** A fetch that lets a test read the bytes its SDK got, as they came from the gateway. */
export function spyingFetch(): { fetch: typeof fetch; seen: () => string } {
  let seen = ''
  const decoder = new TextDecoder()
  // Taken now: a test may make the spy the global fetch.
  const real = globalThis.fetch
  const spy: typeof fetch = async (input, init) => {
    const response = await real(input, init)
    if (!response.body) return response
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += decoder.decode(chunk, { stream: true })
        controller.enqueue(chunk)
      },
    })
    return new Response(response.body.pipeThrough(tap), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
  return { fetch: spy, seen: () => seen }
}
