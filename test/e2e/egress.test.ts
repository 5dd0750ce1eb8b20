// Corporate egress: `proxy: 'env'` through a real loopback CONNECT proxy (and NO_PROXY around it), the order
// `interceptors` run in, and an upstream's own `dispatcher`, used for that upstream only.
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { Agent, type Dispatcher, ProxyAgent } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]

/** A CONNECT proxy on loopback: it opens the tunnel each CONNECT asks for and remembers the targets. */
interface ConnectProxy {
  url: string
  targets: string[]
  close(): Promise<void>
}

async function startConnectProxy(): Promise<ConnectProxy> {
  const targets: string[] = []
  const sockets = new Set<net.Socket>()
  const server = http.createServer((_req, res) => {
    // Only tunnels: a proxy asked to forward a plain request says it does not.
    res.writeHead(405).end()
  })
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    targets.push(req.url ?? '')
    const [host, port] = (req.url ?? '').split(':')
    const upstream = net.connect(Number(port), host as string, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.once('close', () => sockets.delete(socket))
    }
    upstream.once('close', () => client.destroy())
    client.once('close', () => upstream.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

const PROXY_VARIABLES = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'] as const
const savedEnv = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, process.env[name]]))

function restoreEnv(): void {
  for (const name of PROXY_VARIABLES) {
    const value = savedEnv[name]
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
}

let mock: MockUpstream
let proxy: ConnectProxy
const closers: Array<() => Promise<void>> = []

beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  proxy = await startConnectProxy()
})
afterEach(restoreEnv)
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close()
  await proxy.close()
  await mock.close()
})

/** A gateway with the models `a` and `b` on two upstreams of the mock, served on loopback. */
async function start(options: Partial<GatewayOptions> = {}, upstreams: { a?: object; b?: object } = {}) {
  const gateway = createGateway({
    upstreams: {
      a: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY, ...upstreams.a },
      b: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY, ...upstreams.b },
    },
    models: [
      { id: 'model-a', upstream: 'a' },
      { id: 'model-b', upstream: 'b' },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { warn: () => {}, error: () => {} },
    ...options,
  })
  const server = await NODE.mount(gateway)
  closers.push(async () => {
    await server.close()
    await gateway.close()
  })
  return { gateway, url: server.url }
}

const ask = (url: string, model: string, content = 'hello') =>
  call(`${url}/v1/chat/completions`, { headers: bearer(KEY_A), body: { model, messages: [{ role: 'user', content }] } })

const mockTarget = () => `127.0.0.1:${mock.port}`

describe("proxy: 'env'", () => {
  it('sends every call through the CONNECT proxy HTTP_PROXY names, and the answer comes back through it', async () => {
    process.env.HTTP_PROXY = proxy.url
    delete process.env.NO_PROXY
    delete process.env.no_proxy
    const { url } = await start({ proxy: 'env' })
    const before = proxy.targets.length
    const res = await ask(url, 'model-a', 'through the tunnel')
    expect(res.status).toBe(200)
    expect(res.json.choices[0].message.content).toEqual(expect.any(String))
    expect(proxy.targets.slice(before)).toEqual([mockTarget()])
    expect(mock.requests.at(-1)?.body).toContain('through the tunnel')
  })

  it('goes straight to a host NO_PROXY lists, read on each call', async () => {
    process.env.HTTP_PROXY = proxy.url
    process.env.NO_PROXY = 'example.internal'
    const { url } = await start({ proxy: 'env' })
    const before = proxy.targets.length
    expect((await ask(url, 'model-a')).status).toBe(200)
    expect(proxy.targets.length).toBe(before + 1)
    process.env.NO_PROXY = 'example.internal,127.0.0.1'
    const direct = await ask(url, 'model-a', 'no proxy for me')
    expect(direct.status).toBe(200)
    expect(proxy.targets.length).toBe(before + 1)
    expect(mock.requests.at(-1)?.body).toContain('no proxy for me')
  })

  it('without it, the gateway never looks at HTTP_PROXY', async () => {
    process.env.HTTP_PROXY = proxy.url
    const { url } = await start()
    const before = proxy.targets.length
    expect((await ask(url, 'model-a')).status).toBe(200)
    expect(proxy.targets.length).toBe(before)
  })
})

/** An interceptor that notes its name and adds it to the `x-egress` header of the request it passes on. */
function tagging(name: string, seen: string[]): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    seen.push(name)
    const headers = Array.isArray(options.headers) ? [...options.headers, 'x-egress', name] : { ...options.headers, 'x-egress': name }
    return dispatch({ ...options, headers }, handler)
  }
}

describe('interceptors', () => {
  it('run first listed outermost: the request meets them in the order listed, the reverse of undici compose', async () => {
    const seen: string[] = []
    const { url } = await start({ interceptors: [tagging('first', seen), tagging('second', seen), tagging('third', seen)] })
    expect((await ask(url, 'model-a')).status).toBe(200)
    expect(seen).toEqual(['first', 'second', 'third'])
    // Each added its header in turn: the upstream got them in that order too.
    expect(mock.requests.at(-1)?.headers['x-egress']).toBe('first, second, third')

    // undici's own compose reads the other way: its last argument is outermost.
    const composedSeen: string[] = []
    const agent = new Agent().compose(tagging('first', composedSeen), tagging('second', composedSeen))
    const res = await agent.request({
      origin: mock.url,
      path: '/v1/models',
      method: 'GET',
      headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
    })
    await res.body.text()
    expect(composedSeen).toEqual(['second', 'first'])
    await agent.close()
  })

  it('can change what is sent, and wrap an upstream’s own dispatcher too', async () => {
    const seen: string[] = []
    const rename: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) =>
      dispatch({ ...options, headers: [...(options.headers as string[]), 'x-egress-route', String(options.path)] }, handler)
    const own = new Agent()
    closers.push(() => own.close())
    const { url } = await start({ interceptors: [tagging('only', seen), rename] }, { b: { dispatcher: own } })
    expect((await ask(url, 'model-b')).status).toBe(200)
    expect(seen).toEqual(['only'])
    expect(mock.requests.at(-1)?.headers['x-egress-route']).toBe('/v1/chat/completions')
  })
})

describe('dispatcher', () => {
  it("an upstream's own dispatcher carries that upstream's calls only", async () => {
    const viaProxy = new ProxyAgent(proxy.url)
    closers.push(() => viaProxy.close())
    const { url } = await start({}, { a: { dispatcher: viaProxy } })
    const before = proxy.targets.length
    expect((await ask(url, 'model-a')).status).toBe(200)
    expect(proxy.targets.length).toBe(before + 1)
    expect((await ask(url, 'model-b')).status).toBe(200)
    expect((await ask(url, 'model-b')).status).toBe(200)
    expect(proxy.targets.length).toBe(before + 1)
  })

  it("the gateway's dispatcher carries every call, and close() leaves it to its owner", async () => {
    const seen: string[] = []
    const own = new Agent().compose(tagging('own', seen))
    const { gateway, url } = await start({ dispatcher: own })
    expect((await ask(url, 'model-a')).status).toBe(200)
    expect((await ask(url, 'model-b')).status).toBe(200)
    expect(seen).toEqual(['own', 'own'])
    await gateway.close()
    // Still open: the operator closes it.
    const res = await own.request({
      origin: mock.url,
      path: '/v1/models',
      method: 'GET',
      headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
    })
    expect(res.statusCode).toBe(200)
    await res.body.text()
    await own.close()
  })

  it('bad egress options are refused at construction, naming the option', () => {
    const base = {
      upstreams: { a: { type: 'openai' as const, baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'model-a', upstream: 'a' }],
      auth: { apiKeys: [KEY_A] },
    }
    const refused = (options: object, message: RegExp) =>
      expect(() => createGateway({ ...base, ...options } as GatewayOptions)).toThrow(message)
    refused({ proxy: 'http' }, /proxy must be 'env'/)
    refused({ dispatcher: {} }, /dispatcher must be an undici Dispatcher/)
    refused({ interceptors: [42] }, /interceptors must be an array/)
    refused({ interceptors: () => {} }, /interceptors must be an array/)
    refused({ proxy: 'env', dispatcher: new Agent() }, /dispatcher and proxy: 'env' cannot both be set/)
    refused({ upstreams: { a: { ...base.upstreams.a, dispatcher: 'corporate' } } }, /upstreams\.a\.dispatcher must be an undici Dispatcher/)
  })
})
