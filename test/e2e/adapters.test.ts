import { bodyParser } from '@koa/bodyparser'
import express from 'express'
import Koa from 'koa'
import { afterAll, describe, expect, it } from 'vitest'
import { expressMiddleware } from '../../adapters/express.js'
import { koaMiddleware } from '../../adapters/koa.js'
import { nodeHandler } from '../../adapters/node.js'
import type { Gateway } from '../../src/gateway.js'
import { requestBodyHash } from '../../src/json/hash.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, startFixture, useFixture } from '../support/fixture.js'
import { call, eventually, type MountedServer, sendThenAbort } from '../support/http.js'
import { expressApp, hostErrorHandler, koaApp, koaHostErrors, NODE_KINDS, type ServerKind, serve } from '../support/servers.js'

/** A one-off server kind for these tests; the matrix fields do not matter here. */
const kindOf = (name: string, mount: ServerKind['mount']): ServerKind => ({
  name,
  mount,
  body: 'stream',
  badJson: 'gateway',
  unknownPath: 'host',
})

const json = { 'content-type': 'application/json' }

describe('host routes and next() next to the gateway', () => {
  const apps: Array<{ name: string; kind: ServerKind; hostRootUrl: (url: string) => string }> = [
    {
      name: 'express',
      kind: kindOf('express', (g) => serve(expressApp(g, { at: '/ai' }), '/ai')),
      hostRootUrl: (url) => url.slice(0, -'/ai'.length),
    },
    {
      name: 'koa',
      kind: kindOf('koa', (g) => serve(koaApp(g, { prefix: '/ai' }).callback(), '/ai')),
      hostRootUrl: (url) => url.slice(0, -'/ai'.length),
    },
    { name: 'node:http with next', kind: NODE_KINDS[1] as ServerKind, hostRootUrl: (url) => url.slice(0, -'/ai'.length) },
  ]
  for (const { name, kind, hostRootUrl } of apps) {
    describe(name, () => {
      const fx = useFixture(kind)

      it('serves the host routes and the gateway side by side', async () => {
        const root = hostRootUrl(fx.url)
        const host = await call(`${root}/host`)
        expect(host.status).toBe(200)
        expect(host.text).toBe('host route')
        expect(host.headers['x-request-id']).toBeUndefined()
        const models = await call(`${fx.url}/v1/models`)
        expect(models.status).toBe(200)
        expect(models.json.object).toBe('list')
        const chat = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('side by side') })
        expect(chat.status).toBe(200)
        expect(chat.json.choices[0].message.content).toContain('side by side')
      })

      it('answers a mistyped path under its own route prefixes with its JSON 404 and hint, not the host’s', async () => {
        const cases = [
          ['/v1/chat/completion', 'Unknown path /v1/chat/completion.'],
          ['/v1/v1/chat/completions', 'Does the base URL end in /v1 and the path start with it again?'],
          ['/v1/messages/count-tokens', 'POST /v1/messages/count_tokens'],
        ]
        for (const [path, hint] of cases) {
          const res = await call(`${fx.url}${path}`, { headers: bearer(KEY_A), body: chatBody('mistyped') })
          expect(res.status, path).toBe(404)
          expect(res.headers['content-type'], path).toMatch(/^application\/json/)
          expect(res.json.error.code, path).toBe('not_found')
          expect(res.json.error.message, path).toContain(hint)
        }
        expect(fx.mock.requests.filter((r) => r.body.includes('mistyped'))).toHaveLength(0)
      })

      it('passes requests the gateway does not route on to the host', async () => {
        const root = hostRootUrl(fx.url)
        for (const url of [`${fx.url}/v1/nothing-here`, `${fx.url}/v2/chat/completions`, `${fx.url}`, `${root}/elsewhere`]) {
          const res = await call(url, { headers: bearer(KEY_A) })
          expect(res.status, url).toBe(404)
          expect(res.headers['x-request-id'], url).toBeUndefined()
        }
      })
    })
  }

  it('express: the host guard protects its own area and does not touch the gateway', async () => {
    const fx = await startFixture(kindOf('express', (g) => serve(expressApp(g, { at: '/ai' }), '/ai')))
    try {
      const root = fx.url.slice(0, -'/ai'.length)
      expect((await call(`${root}/admin/stats`)).status).toBe(403)
      expect((await call(`${root}/admin/stats`, { headers: { 'x-admin': 'yes' } })).json).toEqual({ ok: true })
      // The host 404 sees the full URL in `originalUrl`, while the gateway got the stripped `req.url`.
      expect((await call(`${fx.url}/v1/nothing-here`)).text).toBe('host 404 /ai/v1/nothing-here')
    } finally {
      await fx.close()
    }
  })

  it('koa: host middleware around the gateway keeps working, and Koa does not answer a second time', async () => {
    const fx = await startFixture(kindOf('koa', (g) => serve(koaApp(g, { prefix: '/ai' }).callback(), '/ai')))
    try {
      const host = await call(`${fx.url.slice(0, -'/ai'.length)}/host`)
      expect(host.headers['x-response-time']).toMatch(/ms$/)
      const models = await call(`${fx.url}/v1/models`)
      expect(models.status).toBe(200)
      // Set by the timing middleware after the gateway had answered: too late, and silently so.
      expect(models.headers['x-response-time']).toBeUndefined()
    } finally {
      await fx.close()
    }
  })
})

/**
 * A body with whitespace, non-ASCII text, integer-like keys (logit_bias token ids, which a parse reorders) and a
 * number beyond double precision.
 */
const SENT =
  '{ "model": "gpt-4o-mini",\n  "messages": [ {"role": "user", "content": "héllo 世界"} ],\n' +
  '  "temperature": 1.50, "logit_bias": {"10": 1, "9": -1}, "seed": 12345678901234567890, "mock": {"delay_ms": 150} }'

describe('body parsers in front of the gateway', () => {
  const drain: express.RequestHandler = (req, _res, next) => {
    req.resume()
    req.on('end', () => next())
  }
  const parsers: Array<{ name: string; forwarded: 'exact' | 'reserialised'; mount: ServerKind['mount'] }> = [
    {
      name: 'express.raw()',
      forwarded: 'exact',
      mount: (g) => serve(expressApp(g, { at: '/ai', before: [express.raw({ type: 'application/json' })] }), '/ai'),
    },
    {
      name: 'express.text() for JSON',
      forwarded: 'exact',
      mount: (g) => serve(expressApp(g, { at: '/ai', before: [express.text({ type: 'application/json' })] }), '/ai'),
    },
    {
      name: 'express.json()',
      forwarded: 'reserialised',
      mount: (g) => serve(expressApp(g, { at: '/ai', before: [express.json()] }), '/ai'),
    },
    {
      // body-parser 1.x (Express 4) leaves `req.body = {}` on requests it skipped, with the body still unread.
      name: 'a placeholder req.body on an unread stream',
      forwarded: 'exact',
      mount: (g) =>
        serve(
          expressApp(g, {
            at: '/ai',
            before: [
              (req, _res, next) => {
                req.body = {}
                next()
              },
            ],
          }),
          '/ai',
        ),
    },
    {
      name: '@koa/bodyparser (rawBody)',
      forwarded: 'exact',
      mount: (g) => serve(koaApp(g, { prefix: '/ai', before: [bodyParser()] }).callback(), '/ai'),
    },
    {
      name: '@koa/bodyparser without rawBody',
      forwarded: 'reserialised',
      mount: (g) =>
        serve(
          koaApp(g, {
            prefix: '/ai',
            before: [
              bodyParser(),
              async (ctx, next) => {
                delete (ctx.request as { rawBody?: string }).rawBody
                await next()
              },
            ],
          }).callback(),
          '/ai',
        ),
    },
  ]

  for (const parser of parsers) {
    it(`${parser.name}: the upstream and the record get the ${parser.forwarded} body, with the right hash`, async () => {
      const fx = await startFixture(kindOf(parser.name, parser.mount))
      try {
        const expected = parser.forwarded === 'exact' ? SENT : JSON.stringify(JSON.parse(SENT))
        const res = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), ...json }, body: SENT })
        expect(res.status).toBe(200)
        expect(fx.mock.requests).toHaveLength(1)
        expect(fx.mock.requests[0]!.body).toBe(expected)

        await sendThenAbort(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: SENT, afterMs: 30 })
        const list = await eventually(async () => {
          const l = (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
          return l.count === 1 ? l : undefined
        })
        const detail = (await call(`${fx.url}/v1/recoveries/${list.items[0].request_id}`, { headers: bearer(KEY_A) })).json
        expect(detail.request.body_raw).toBe(expected)
        expect(detail.request_body_hash).toBe(requestBodyHash(SENT))
        expect(detail.request.request_body_hash).toBe(requestBodyHash(SENT))
        const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: { ...bearer(KEY_A), ...json }, body: SENT })
        expect(lookup.json.items.map((i: { request_id: string }) => i.request_id)).toEqual([list.items[0].request_id])
      } finally {
        await fx.close()
      }
    })
  }

  it('a middleware that drained the body and kept nothing gets a prompt 500, not a hang', async () => {
    const fx = await startFixture(kindOf('drain', (g) => serve(expressApp(g, { at: '/ai', before: [drain] }), '/ai')))
    try {
      const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
      expect(res.status).toBe(500)
      expect(res.json.error.code).toBe('internal_error')
      expect(res.json.error.message).toMatch(/read the request body/)
      expect(fx.mock.requests).toHaveLength(0)
    } finally {
      await fx.close()
    }
  })

  it('the host parser limit applies first: a body above express.json({ limit: "1kb" }) gets a prompt 413 from the host', async () => {
    const big = JSON.stringify(chatBody('x'.repeat(4096)))
    for (const withHandler of [true, false]) {
      const fx = await startFixture(
        kindOf('express.json 1kb', (g) => {
          const app = express()
          app.use(express.json({ limit: '1kb' }))
          app.use('/ai', expressMiddleware(g))
          if (withHandler) app.use(hostErrorHandler)
          return serve(app, '/ai')
        }),
      )
      try {
        const started = Date.now()
        const res = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), ...json }, body: big })
        expect(res.status).toBe(413)
        if (withHandler) expect(res.json.host_error).toMatch(/too large/)
        expect(Date.now() - started).toBeLessThan(2000)
        expect(fx.mock.requests).toHaveLength(0)
        // A small body still goes through.
        expect((await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })).status).toBe(200)
      } finally {
        await fx.close()
      }
    }
  })

  it('the host parser limit applies first: @koa/bodyparser with jsonLimit "1kb" answers 413', async () => {
    const fx = await startFixture(
      kindOf('koa 1kb', (g) => serve(koaApp(g, { prefix: '/ai', before: [bodyParser({ jsonLimit: '1kb' })] }).callback(), '/ai')),
    )
    try {
      const res = await call(`${fx.url}/v1/chat/completions`, {
        headers: { ...bearer(KEY_A), ...json },
        body: JSON.stringify(chatBody('x'.repeat(4096))),
      })
      expect(res.status).toBe(413)
      expect(fx.mock.requests).toHaveLength(0)
    } finally {
      await fx.close()
    }
  })

  it('a client gone before the gateway starts reading its body is not waited for', async () => {
    // A slow authenticate lets the client leave before the body is read: the drained, destroyed stream
    // must not keep the request (and close()) waiting forever.
    const fx = await startFixture(
      kindOf('node', (g) => serve(nodeHandler(g), '')),
      {
        auth: { authenticate: async () => new Promise((resolve) => setTimeout(() => resolve({ owner: 'slow' }), 200)) },
      },
    )
    try {
      await sendThenAbort(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: JSON.stringify(chatBody()), afterMs: 20 })
      await new Promise((resolve) => setTimeout(resolve, 300))
      const closed = await Promise.race([
        fx.gateway.close().then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('hung'), 2000)),
      ])
      expect(closed).toBe('closed')
      expect(fx.mock.requests).toHaveLength(0)
    } finally {
      await fx.close()
    }
  })
})

describe('errors and the host error handler', () => {
  const servers: MountedServer[] = []
  afterAll(async () => {
    for (const server of servers) await server.close()
  })

  /** An Express app around a gateway stand-in, counting what reaches its error handler. */
  async function withStub(handle: Gateway['handle']) {
    const seen: unknown[] = []
    const app = express()
    app.use(
      '/ai',
      expressMiddleware({
        id: 'fake',
        cache: { delete: async () => 0 },
        handle,
        close: async () => {},
        status: async () => ({ status: 'ok', store: 'ok' }),
        ready: async () => {},
        usage: async () => ({ requests: 0, tokens: 0, cost: 0 }),
      }),
    )
    app.use(((error, req, res, next) => {
      seen.push(error)
      hostErrorHandler(error, req, res, next)
    }) satisfies express.ErrorRequestHandler)
    const server = await serve(app, '/ai')
    servers.push(server)
    return { url: server.url, seen }
  }

  it('express: an error before anything was sent reaches the host error handler', async () => {
    const { url, seen } = await withStub(async () => {
      throw new Error('boom')
    })
    const res = await call(`${url}/v1/models`)
    expect(res.status).toBe(500)
    expect(res.json).toEqual({ host_error: 'boom' })
    expect(seen).toHaveLength(1)
  })

  it('express: an error after the response started cuts the connection and skips the host error handler', async () => {
    const { url, seen } = await withStub(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' })
      res.write('partial')
      await new Promise((resolve) => setTimeout(resolve, 20))
      throw new Error('late')
    })
    await expect(call(`${url}/v1/models`)).rejects.toThrow()
    expect(seen).toHaveLength(0)
  })

  it('express: an error after the response ended changes nothing for the client', async () => {
    const { url, seen } = await withStub(async (_req, res) => {
      res.end('done')
      throw new Error('after the end')
    })
    const res = await call(`${url}/v1/models`)
    expect(res.status).toBe(200)
    expect(res.text).toBe('done')
    expect(seen).toHaveLength(0)
  })

  it('koa: an error before anything was sent goes to the host error handling', async () => {
    const app = new Koa()
    app.silent = true
    app.use(koaHostErrors)
    app.use(
      koaMiddleware({
        id: 'fake',
        cache: { delete: async () => 0 },
        handle: async () => Promise.reject(new Error('boom')),
        close: async () => {},
        status: async () => ({ status: 'ok', store: 'ok' }),
        ready: async () => {},
        usage: async () => ({ requests: 0, tokens: 0, cost: 0 }),
      }),
    )
    const server = await serve(app.callback(), '')
    servers.push(server)
    const res = await call(`${server.url}/v1/models`)
    expect(res.status).toBe(500)
    expect(res.json).toEqual({ host_error: 'boom' })
  })

  it('koa: an error after the response started cuts the connection instead of leaving it open', async () => {
    const app = new Koa()
    app.silent = true
    app.use(
      koaMiddleware({
        id: 'fake',
        cache: { delete: async () => 0 },
        handle: async (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' })
          res.write('partial')
          throw new Error('late')
        },
        close: async () => {},
        status: async () => ({ status: 'ok', store: 'ok' }),
        ready: async () => {},
        usage: async () => ({ requests: 0, tokens: 0, cost: 0 }),
      }),
    )
    const server = await serve(app.callback(), '')
    servers.push(server)
    const outcome = await Promise.race([
      call(`${server.url}/v1/models`).then(
        () => 'answered',
        () => 'cut',
      ),
      new Promise((resolve) => setTimeout(() => resolve('left open'), 3000)),
    ])
    expect(outcome).toBe('cut')
  })

  it('the gateway answers its own errors itself, in its own shape, without the host error handler', async () => {
    const seen: unknown[] = []
    const fx = await startFixture(
      kindOf('express', (g) => {
        const app = express()
        app.use('/ai', expressMiddleware(g))
        app.use(((error, _req, res, _next) => {
          seen.push(error)
          res.status(500).end()
        }) satisfies express.ErrorRequestHandler)
        return serve(app, '/ai')
      }),
    )
    try {
      const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { mock: { destroy: true } }) })
      expect(res.status).toBe(502)
      expect(res.json.error.code).toBe('upstream_unreachable')
      expect(seen).toHaveLength(0)
    } finally {
      await fx.close()
    }
  })
})
