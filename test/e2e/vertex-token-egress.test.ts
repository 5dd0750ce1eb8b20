import http from 'node:http'
import net from 'node:net'
import { type Dispatcher, ProxyAgent } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, listen, type MountedServer } from '../support/http.js'
import { startVertexFixture, VERTEX_GEMINI, type VertexFixture } from '../support/vertex.js'

// A service-account key's token exchange leaves the process as the upstream's calls do: through the upstream's
// dispatcher (a proxy), behind the gateway's interceptors; and it gets `tokenTimeoutMs`, not a fixed 10 s.

let fx: VertexFixture | undefined
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  await fx?.close()
  fx = undefined
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const chat = (f: VertexFixture, text: string) =>
  call(`${f.url}/v1/chat/completions`, {
    headers: bearer(KEY_A),
    body: { model: VERTEX_GEMINI, messages: [{ role: 'user', content: text }] },
  })
const failedLine = (f: VertexFixture) => f.logs.find((line) => line.message === 'model-gateway: upstream attempt failed')

/** A server that takes requests and never answers them. */
async function silentServer(): Promise<MountedServer> {
  const server = http.createServer(() => {})
  const mounted = await listen(server)
  cleanups.push(() => {
    server.closeAllConnections()
    return mounted.close()
  })
  return mounted
}

/** A CONNECT proxy on loopback that keeps the first line of every request sent through its tunnels (plain HTTP). */
async function connectProxy(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = []
  const sockets = new Set<net.Socket>()
  const server = http.createServer((_req, res) => res.writeHead(405).end())
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const [host, port] = (req.url ?? '').split(':')
    const target = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) target.write(head)
      client.on('data', (chunk: Buffer) => {
        const line = chunk.toString('latin1').split('\r\n', 1)[0] ?? ''
        if (/^[A-Z]+ \S+ HTTP\/1\.1$/.test(line)) seen.push(line)
      })
      client.pipe(target).pipe(client)
    })
    for (const socket of [client, target]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
  })
  const mounted = await listen(server)
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy()
    return mounted.close()
  })
  return { url: mounted.url, seen }
}

describe('tokenTimeoutMs', () => {
  it('a token endpoint that never answers fails the call after tokenTimeoutMs with upstream_auth_failed', async () => {
    const silent = await silentServer()
    fx = await startVertexFixture({
      upstream: (_mock, key) => ({ credentials: { ...key, token_uri: `${silent.url}/token` }, tokenTimeoutMs: 300 }),
    })
    const started = performance.now()
    const res = await chat(fx, 'silent token endpoint')
    const took = performance.now() - started
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_auth_failed')
    expect(took).toBeGreaterThanOrEqual(290)
    expect(took).toBeLessThan(3000)
    expect(failedLine(fx)?.fields).toMatchObject({ code: 'upstream_auth_failed', cause: 'token_endpoint_unreachable' })
    // Nothing reached Vertex AI without a token.
    expect(fx.mock.requests.filter((r) => r.path.includes('/publishers/'))).toHaveLength(0)
  })

  it.each([
    [0, 'must be a whole number of ms'],
    [1.5, 'must be a whole number of ms'],
    ['1000', 'must be a whole number of ms'],
  ])('%j is refused at construction', async (value, message) => {
    await expect(startVertexFixture({ upstream: { tokenTimeoutMs: value } })).rejects.toThrow(`upstreams.vertex.tokenTimeoutMs ${message}`)
  })

  it('is refused in express mode, which fetches no token', async () => {
    await expect(
      startVertexFixture({
        upstream: { credentials: undefined, project: undefined, location: undefined, apiKey: 'k', tokenTimeoutMs: 500 },
      }),
    ).rejects.toThrow('tokenTimeoutMs means nothing in express mode')
  })
})

describe('the token exchange goes out as the upstream’s calls do', () => {
  it('through the upstream’s dispatcher: a proxy sees the token request and the calls', async () => {
    const proxy = await connectProxy()
    const agent = new ProxyAgent(proxy.url)
    cleanups.push(() => agent.close())
    fx = await startVertexFixture({ upstream: { dispatcher: agent } })
    expect((await chat(fx, 'through the proxy')).status).toBe(200)
    expect(proxy.seen).toContain('POST /token HTTP/1.1')
    expect(proxy.seen.some((line) => line.includes('/publishers/google/models/gemini-2.5-flash:generateContent'))).toBe(true)
    expect(fx.mock.vertex.tokensIssued).toBe(1)
  })

  it('behind the gateway’s interceptors', async () => {
    const passed: string[] = []
    const record: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
      passed.push(`${options.method} ${options.path}`)
      return dispatch(options, handler)
    }
    fx = await startVertexFixture({ gateway: { interceptors: [record] } })
    expect((await chat(fx, 'behind interceptors')).status).toBe(200)
    expect(passed[0]).toBe('POST /token')
    expect(passed.some((line) => line.includes(':generateContent'))).toBe(true)
  })
})
