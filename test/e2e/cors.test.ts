import { describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { describeMatrix, NODE_KINDS } from '../support/servers.js'

const APP = 'https://app.example.com'
const OTHER = 'https://evil.example.net'
/** What the OpenAI SDK asks for in a browser (`dangerouslyAllowBrowser`), plus an idempotency key. */
const SDK_REQUEST_HEADERS =
  'authorization, content-type, x-stainless-arch, x-stainless-lang, x-stainless-os, x-stainless-package-version, x-stainless-retry-count, x-stainless-runtime, x-stainless-runtime-version, x-stainless-timeout, idempotency-key'

const preflight = (url: string, origin: string, requestHeaders = SDK_REQUEST_HEADERS) =>
  call(`${url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  })

const varyOf = (value: string | string[] | undefined) =>
  String(value ?? '')
    .split(/\s*,\s*/)
    .map((v) => v.toLowerCase())

describeMatrix('CORS with listed origins', (kind) => {
  const fx = useFixture(kind, { cors: { origins: [APP] } })

  it('answers a preflight itself: the origin, POST and every SDK header allowed, cached 600 s', async () => {
    const res = await preflight(fx.url, APP)
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(res.headers['access-control-allow-methods']).toContain('POST')
    expect(res.headers['access-control-allow-headers']).toBe(SDK_REQUEST_HEADERS)
    expect(res.headers['access-control-max-age']).toBe('600')
    expect(varyOf(res.headers.vary)).toContain('origin')
  })

  it('answers the preflight of an origin not listed without CORS headers, so the browser refuses the call', async () => {
    const res = await preflight(fx.url, OTHER)
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    expect(res.headers['access-control-allow-headers']).toBeUndefined()
  })

  it('allows what model-gateway/client sends to resume a stream from a browser: the key and Last-Event-ID', async () => {
    const res = await call(`${fx.url}/v1/recoveries/01ARZ3NDEKTSV4RRFFQ69G5FAV/stream`, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, last-event-id' },
    })
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-headers']).toBe('authorization, last-event-id')
  })

  it('allows what the Anthropic SDK sends from a browser on Messages calls, and exposes the request-id it reads', async () => {
    const requested =
      'anthropic-beta, anthropic-dangerous-direct-browser-access, anthropic-version, content-type, x-api-key, x-stainless-os, x-stainless-retry-count'
    const res = await call(`${fx.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': requested },
    })
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-headers']).toBe(requested)
    const refused = await call(`${fx.url}/v1/messages`, {
      headers: { origin: APP, 'anthropic-version': '2023-06-01' },
      body: { model: 'm', max_tokens: 1, messages: [] },
    })
    expect(refused.status).toBe(401)
    expect(refused.headers['access-control-allow-origin']).toBe(APP)
    expect(String(refused.headers['access-control-expose-headers']).split(', ')).toContain('request-id')
    expect(refused.headers['request-id']).toBe(refused.headers['x-request-id'])
  })

  it('leaves out a requested header it does not allow', async () => {
    const res = await preflight(fx.url, APP, 'authorization, x-secret-sauce')
    expect(res.headers['access-control-allow-headers']).toBe('authorization')
  })

  it('puts the origin, Vary and the exposed headers on model answers, whole and streamed, and on errors', async () => {
    const headers = { ...bearer(KEY_A), origin: APP }
    for (const body of [chatBody(), chatBody('s', { stream: true })]) {
      const res = await call(`${fx.url}/v1/chat/completions`, { headers, body })
      expect(res.status).toBe(200)
      expect(res.headers['access-control-allow-origin']).toBe(APP)
      const exposed = String(res.headers['access-control-expose-headers']).split(', ')
      expect(exposed.filter((name) => !/ratelimit/.test(name))).toEqual([
        'x-request-id',
        'request-id',
        'x-amzn-requestid',
        'idempotent-replayed',
        'retry-after',
        'x-should-retry',
        'x-model-gateway-dropped',
        'x-model-gateway-clamped',
        'x-model-gateway-cache',
        'age',
      ])
      // A browser script reads the rate-limit headers of a 429 under both names.
      expect(exposed).toEqual(expect.arrayContaining(['x-ratelimit-remaining-requests', 'anthropic-ratelimit-requests-remaining']))
      expect(varyOf(res.headers.vary)).toContain('origin')
      expect(res.headers['x-request-id']).toBeDefined()
    }
    const refused = await call(`${fx.url}/v1/chat/completions`, { headers: { origin: APP }, body: chatBody() })
    expect(refused.status).toBe(401)
    expect(refused.headers['access-control-allow-origin']).toBe(APP)
    const models = await call(`${fx.url}/v1/models`, { headers: { origin: OTHER } })
    expect(models.status).toBe(200)
    expect(models.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('CORS with any origin', () => {
  const fx = useFixture(NODE_KINDS[0]!, { cors: { origins: '*', allowHeaders: ['X-App-Version'], maxAgeSeconds: 60 } })

  it("answers '*', without Vary: Origin, with the extra header allowed", async () => {
    const res = await preflight(fx.url, OTHER, 'authorization, x-app-version')
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-headers']).toBe('authorization, x-app-version')
    expect(res.headers['access-control-max-age']).toBe('60')
    expect(varyOf(res.headers.vary)).not.toContain('origin')
    const answer = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), origin: OTHER }, body: chatBody() })
    expect(answer.headers['access-control-allow-origin']).toBe('*')
  })
})

describe('CORS with a wildcard origin', () => {
  const fx = useFixture(NODE_KINDS[0]!, { cors: { origins: ['https://*.a.com', 'http://*.b.com:8080'] } })
  const allowedOf = async (origin: string) => {
    const pre = await preflight(fx.url, origin)
    const answer = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), origin }, body: chatBody() })
    expect(answer.status).toBe(200)
    expect(answer.headers['access-control-allow-origin']).toBe(pre.headers['access-control-allow-origin'])
    return pre.headers['access-control-allow-origin']
  }

  it.each(['https://x.a.com', 'https://app-2.a.com', 'http://x.b.com:8080'])('allows %s, echoing it', async (origin) => {
    expect(await allowedOf(origin)).toBe(origin)
  })

  it.each([
    'https://a.com',
    'https://x.a.com.evil.com',
    'https://x.y.a.com',
    'https://evila.com',
    'https://.a.com',
    'http://x.a.com',
    'https://x.a.com:8443',
    'http://x.b.com',
    'https://x-.a.com',
  ])('refuses %s', async (origin) => {
    expect(await allowedOf(origin)).toBeUndefined()
  })
})

describe('CORS off (the default)', () => {
  const fx = useFixture(NODE_KINDS[0]!)

  it('sends no CORS header and answers a preflight 405, as any OPTIONS', async () => {
    const res = await preflight(fx.url, APP)
    expect(res.status).toBe(405)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const answer = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), origin: APP }, body: chatBody() })
    expect(answer.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('cors option checks', () => {
  const base: GatewayOptions = {
    upstreams: { u: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
    models: [{ id: 'm', upstream: 'u' }],
    auth: { apiKeys: ['k'] },
  }
  const invalid = (cors: unknown) => {
    try {
      createGateway({ ...base, cors: cors as GatewayOptions['cors'] })
    } catch (error) {
      return (error as { code?: string; message: string }).code === 'invalid_options' ? (error as Error).message : undefined
    }
    return undefined
  }

  it.each([
    [{ origins: [] }, "cors.origins must be '*' or a non-empty array"],
    [{ origins: 'https://app.example.com' }, "cors.origins must be '*' or a non-empty array"],
    [{ origins: ['https://app.example.com/'] }, 'cors.origins[0] must be an origin'],
    [{ origins: ['app.example.com'] }, 'cors.origins[0] must be an origin'],
    [{ origins: ['null'] }, 'cors.origins[0] must be an origin'],
    [{ origins: ['https://app.example.com', 'https://a*.example.com'] }, "cors.origins[1] has a wildcard '*' that can never match"],
    [{ origins: ['https://*.com'] }, "cors.origins[0] has a wildcard '*' that can never match"],
    [{ origins: ['https://x.*.example.com'] }, "has a wildcard '*' that can never match"],
    [{ origins: ['https://*.*.example.com'] }, "has a wildcard '*' that can never match"],
    [{ origins: ['https://*.example.com/'] }, "has a wildcard '*' that can never match"],
    [{ origins: ['*.example.com'] }, "has a wildcard '*' that can never match"],
    [{ origins: ['https://*'] }, "has a wildcard '*' that can never match"],
    [{ origins: '*', allowHeaders: ['bad header'] }, 'not a header name'],
    [{ origins: '*', maxAgeSeconds: -1 }, 'cors.maxAgeSeconds must be an integer >= 0'],
    [{ origins: '*', origin: 'x' }, 'did you mean `origins`?'],
  ])('rejects %j', (cors, message) => {
    expect(invalid(cors)).toContain(message)
  })
})
