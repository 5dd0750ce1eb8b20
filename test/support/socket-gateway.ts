// A gateway with its WebSocket mode wired, on the mock upstream: an OpenAI, a Gemini and an Anthropic model, under
// node:http, Express or Koa, each with `server.on('upgrade', upgradeHandler(gateway))` as the docs say.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Koa from 'koa'
import { expressMiddleware } from '../../adapters/express.js'
import { koaMiddleware } from '../../adapters/koa.js'
import { nodeHandler, type UpgradeHandlerOptions, upgradeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { KEY_A, KEY_B, UPSTREAM_KEY } from './fixture.js'

/** The models of every upstream dialect, by what their upstream speaks. */
export const SOCKET_MODELS = [
  ['an OpenAI', 'gpt-4o-mini'],
  ['a Gemini', 'gemini-2.5-flash'],
  ['an Anthropic', 'claude-sonnet-4-5'],
] as const

/** A running gateway with its sockets. */
export interface SocketGateway {
  url: string
  gateway: Gateway
  mock: MockUpstream
  usage: UsageEvent[]
  logs: Array<{ level: string; message: string; meta: unknown }>
  server: http.Server
  close(): Promise<void>
}

/** How the gateway is mounted. */
export type Host = 'node' | 'express' | 'koa'

/** Starts the chain; the gateway under `prefix` (default none). Closing closes the gateway (its sockets) first. */
export async function startSocketGateway(
  options: { host?: Host; prefix?: string; sockets?: UpgradeHandlerOptions; gateway?: Partial<GatewayOptions>; mock?: MockUpstream } = {},
): Promise<SocketGateway> {
  const mock = options.mock ?? (await startMockUpstream({ apiKey: UPSTREAM_KEY }))
  const usage: UsageEvent[] = []
  const logs: SocketGateway['logs'] = []
  const gateway = createGateway({
    upstreams: {
      mock: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt-4o-mini', upstream: 'mock' },
      { id: 'gemini-2.5-flash', upstream: 'gem' },
      { id: 'claude-sonnet-4-5', upstream: 'claude' },
    ],
    auth: { apiKeys: [KEY_A, KEY_B] },
    onUsage: (event) => usage.push(event),
    logger: {
      info: (message, meta) => logs.push({ level: 'info', message, meta }),
      warn: (message, meta) => logs.push({ level: 'warn', message, meta }),
      error: (message, meta) => logs.push({ level: 'error', message, meta }),
    },
    ...options.gateway,
  })
  const prefix = options.prefix ?? ''
  const server = hostServer(options.host ?? 'node', gateway, prefix)
  server.on('upgrade', upgradeHandler(gateway, { prefix, ...options.sockets }))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    gateway,
    mock,
    usage,
    logs,
    server,
    async close() {
      await gateway.close({ timeoutMs: 5_000 })
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      if (!options.mock) await mock.close()
    },
  }
}

function hostServer(host: Host, gateway: Gateway, prefix: string): http.Server {
  if (host === 'express') {
    const app = express()
    app.use(prefix || '/', expressMiddleware(gateway))
    return http.createServer(app)
  }
  if (host === 'koa') {
    const app = new Koa()
    app.use(koaMiddleware(gateway, { prefix }))
    return http.createServer(app.callback())
  }
  return http.createServer(nodeHandler(gateway, { prefix }))
}
