import diagnosticsChannel from 'node:diagnostics_channel'
import { gunzipSync } from 'node:zlib'
import Keyv from 'keyv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { ownerId } from '../../src/index.js'
import { gatewayChannels } from '../../src/observe/channels.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { bearer, KEY_A, KEY_B, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer, open } from '../support/http.js'
import { serve } from '../support/servers.js'

// The console's JSON endpoints and files, without a browser: what each key sees, and that one owner never sees
// another's calls, background responses or usage. The page itself is tested in a real browser (test/console/).

const ADMIN = 'console-admin-key-0123'
const chat = (mock: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], mock })

function options(mockUrl: string, extra: Partial<GatewayOptions> = {}): GatewayOptions {
  return {
    upstreams: { mock: { type: 'openai', baseUrl: `${mockUrl}/v1`, apiKey: UPSTREAM_KEY } },
    models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
    auth: { apiKeys: [KEY_A, KEY_B] },
    pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
    limits: { owners: { costPerDay: 5, requestsPerMinute: 1000 } },
    logger: { warn() {}, error: (...line: unknown[]) => console.error(...line) },
    ...extra,
  }
}

let mock: MockUpstream
let gateway: Gateway
let server: MountedServer
const base = () => `${server.url}/console`

beforeAll(async () => {
  mock = await startMockUpstream()
  gateway = createGateway(options(mock.url, { console: { adminKeys: [ADMIN] } }))
  server = await serve(nodeHandler(gateway, { prefix: '/ai' }), '/ai')
})
afterAll(async () => {
  await server.close()
  await gateway.close()
  await mock.close()
})

describe('console files', () => {
  it('serves the page under the mount with a strict CSP, gzipped when asked; the bare path redirects relatively', async () => {
    const redirect = await call(base())
    expect(redirect.status).toBe(308)
    expect(redirect.headers.location).toBe('console/')
    const page = await open(`${base()}/`, { headers: { 'accept-encoding': 'gzip' } })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    expect(page.headers['content-encoding']).toBe('gzip')
    const html = gunzipSync(Buffer.from(await page.body.arrayBuffer())).toString()
    expect(html).toContain('<meta name="console-path" content="/console">')
    // Nothing from elsewhere, nothing inline.
    expect(html).not.toMatch(/https?:\/\//)
    expect(html).not.toMatch(/<script>|<style>| style=| on[a-z]+=/)
    for (const file of ['app.js', 'app.css']) {
      const res = await call(`${base()}/${file}`)
      expect(res.status).toBe(200)
      expect(res.text).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/)
    }
    expect((await call(`${base()}/nope.js`)).status).toBe(404)
  })
})

describe('console endpoints', () => {
  it('tells a missing key and a wrong key apart, each with a clear message', async () => {
    const none = await call(`${base()}/api/session`)
    expect(none.status).toBe(401)
    expect(none.json.error.message).toMatch(/Sign in with a key/)
    const wrong = await call(`${base()}/api/session`, { headers: bearer('sk-wrong') })
    expect(wrong.status).toBe(401)
    expect(wrong.json.error.message).toMatch(/not an API key of this gateway, nor a console admin key/)
    // The key is never taken from the address.
    expect((await call(`${base()}/api/session?key=${KEY_A}`)).status).toBe(401)
  })

  it('signs in an owner and an admin', async () => {
    const a = await call(`${base()}/api/session`, { headers: bearer(KEY_A) })
    expect(a.json).toEqual({ owner: ownerId({ apiKey: KEY_A }), admin: false, usageDays: 30 })
    const admin = await call(`${base()}/api/session`, { headers: bearer(ADMIN) })
    expect(admin.json).toEqual({ owner: null, admin: true, usageDays: 30 })
    expect((await call(`${base()}/api/admin`, { headers: bearer(KEY_A) })).status).toBe(403)
    expect((await call(`${base()}/api/usage`, { headers: bearer(ADMIN) })).status).toBe(403)
  })

  it("keeps per-day usage whose cost today is gateway.usage's, and shows each owner only its own", async () => {
    for (let i = 0; i < 3; i++)
      expect((await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chat() })).status).toBe(200)
    const owner = ownerId({ apiKey: KEY_A })
    const usage = await eventually(async () => {
      const res = await call(`${base()}/api/usage`, { headers: bearer(KEY_A) })
      return res.json.today.requests >= 3 ? res.json : undefined
    })
    const windows = await gateway.usage(owner)
    expect(windows.cost).toBeGreaterThan(0)
    expect(usage.today.cost).toBe(windows.cost)
    expect(usage.today.tokens).toBeGreaterThan(0)
    expect(usage.windows.costUsd).toMatch(/^\d+\.\d{2,}$/)
    expect(usage.limits.costPerDay.limit).toBe('5.00')
    expect(usage.limits.requestsPerMinute.remaining).toBe(1000 - windows.requests)
    const b = await call(`${base()}/api/usage`, { headers: bearer(KEY_B) })
    expect(b.json.today).toMatchObject({ requests: 0, tokens: 0, cost: 0 })
    expect(b.json.days).toEqual([])
    const admin = await call(`${base()}/api/admin`, { headers: bearer(ADMIN) })
    expect(admin.json.owners.find((o: { owner: string }) => o.owner === owner).cost).toBe(windows.cost)
    expect(admin.json.models).toEqual([
      { id: 'gpt-4o-mini', upstream: 'mock', type: 'openai', upstreamModel: 'gpt-4o-mini', circuit: 'closed', fallbacks: [] },
    ])
  })

  it("lists an owner's running calls to that owner only; an admin sees every owner's, without bodies", async () => {
    const running = call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chat({ delay_ms: 1500 }) })
    const mine = await eventually(async () => {
      const res = await call(`${base()}/api/calls`, { headers: bearer(KEY_A) })
      return res.json.items.length === 1 ? res.json.items : undefined
    })
    expect(mine[0]).toMatchObject({ model: 'gpt-4o-mini', operation: 'chat.completions', stream: false, background: false })
    expect(mine[0].owner).toBeUndefined()
    expect((await call(`${base()}/api/calls`, { headers: bearer(KEY_B) })).json.items).toEqual([])
    // B asking for everyone's gets its own (none).
    expect((await call(`${base()}/api/calls?all=true`, { headers: bearer(KEY_B) })).json.items).toEqual([])
    const all = await call(`${base()}/api/calls?all=true`, { headers: bearer(ADMIN) })
    expect(all.json.items).toHaveLength(1)
    expect(all.json.items[0].owner).toBe(ownerId({ apiKey: KEY_A }))
    expect(JSON.stringify(all.json)).not.toContain('hi')
    expect((await running).status).toBe(200)
    await eventually(async () => (await call(`${base()}/api/calls`, { headers: bearer(KEY_A) })).json.items.length === 0)
  })

  it('streams the running calls as SSE read with the key in a header', async () => {
    const controller = new AbortController()
    const res = await open(`${base()}/api/calls/stream`, { headers: bearer(KEY_A), signal: controller.signal })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/event-stream')
    const seen: string[] = []
    let running: ReturnType<typeof call> | undefined
    for await (const chunk of res.body) {
      seen.push(String(chunk))
      // The picture as it is first, then the call once it starts.
      running ??= call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chat({ delay_ms: 800 }) })
      if (seen.join('').includes('"model":"gpt-4o-mini"')) break
    }
    controller.abort()
    expect(seen.join('')).toMatch(/^event: calls\ndata: \{"items":\[\]\}\n\n/)
    expect((await running)?.status).toBe(200)
  })

  it("lists an owner's background responses to that owner only", async () => {
    const created = await call(`${server.url}/v1/responses`, {
      headers: bearer(KEY_A),
      body: { model: 'gpt-4o-mini', input: 'hello', background: true },
    })
    expect(created.status).toBe(200)
    const items = await eventually(async () => {
      const res = await call(`${base()}/api/background`, { headers: bearer(KEY_A) })
      if (res.status !== 200) throw new Error(res.text)
      return res.json.items.length > 0 && res.json.items[0].status === 'completed' ? res.json.items : undefined
    })
    expect(items[0]).toMatchObject({ id: created.json.id, model: 'gpt-4o-mini', status: 'completed' })
    expect(items[0].events).toBeGreaterThan(1)
    expect((await call(`${base()}/api/background`, { headers: bearer(KEY_B) })).json.items).toEqual([])
  })
})

describe('console off (the default)', () => {
  it('serves nothing, subscribes to nothing and adds no store operation to a call', async () => {
    let ops = 0
    const map = new Map<string, unknown>()
    const store = new Keyv({
      store: new Proxy(map, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver)
          if (typeof value !== 'function') return value
          return (...args: unknown[]) => {
            if (['get', 'set', 'delete', 'has'].includes(String(name))) ops++
            return (value as (...a: unknown[]) => unknown).apply(target, args)
          }
        },
      }),
    })
    const off = createGateway(options(mock.url, { store, limits: undefined }))
    const offServer = await serve(nodeHandler(off))
    try {
      const page = await call(`${offServer.url}/console/`)
      expect(page.status).toBe(404)
      expect(page.json.error.message).toMatch(/Unknown path/)
      const before = ops
      expect((await call(`${offServer.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chat() })).status).toBe(200)
      expect(ops - before).toBe(0)
    } finally {
      await offServer.close()
      await off.close()
    }
  })

  it('a gateway with the console subscribes to call:end, one without does not', async () => {
    // The gateway of this file has the console: it listens. Closing it would unsubscribe (checked below).
    expect(diagnosticsChannel.hasSubscribers(gatewayChannels.callEnd)).toBe(true)
    const on = createGateway(options(mock.url, { console: {} }))
    await on.close()
    await server.close()
    await gateway.close()
    expect(diagnosticsChannel.hasSubscribers(gatewayChannels.callEnd)).toBe(false)
    gateway = createGateway(options(mock.url))
    server = await serve(nodeHandler(gateway, { prefix: '/ai' }), '/ai')
    expect(diagnosticsChannel.hasSubscribers(gatewayChannels.callEnd)).toBe(false)
  })
})
