import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway, type LoggedLine } from '../support/collecting-gateway.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, closedPort, listen, type MountedServer } from '../support/http.js'
import { SELF_SIGNED } from '../support/self-signed.js'
import { serve } from '../support/servers.js'

const SECRET = 'sk-upstream-do-not-log-0123'
const FAILED = 'model-gateway: upstream attempt failed'
const opened: Array<{ close(): Promise<unknown> | unknown }> = []

afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close()
})

/** A gateway with one OpenAI upstream `name` at `baseUrl`; sends one chat call and returns the answer and the log lines. */
async function callThrough(
  name: string,
  baseUrl: string,
  extra: Partial<GatewayOptions> = {},
): Promise<{ status: number; json: any; line: LoggedLine; logs: LoggedLine[] }> {
  const { gateway, logs } = collectingGateway({
    upstreams: { [name]: { type: 'openai', baseUrl, apiKey: SECRET } },
    models: [{ id: 'gpt-4o-mini', upstream: name }],
    ...extra,
  })
  const server: MountedServer = await serve(nodeHandler(gateway))
  opened.push({ close: () => gateway.close() }, server)
  const res = await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('private prompt text') })
  const line = logs.find((l) => l.message === FAILED)
  expect(line, 'a warn line for the failed attempt').toBeDefined()
  // Neither the key, nor the prompt, nor the base URL's path is in any line.
  expect(JSON.stringify(logs)).not.toMatch(/sk-upstream-do-not-log|private prompt text|deep\/path/)
  return { status: res.status, json: res.json, line: line as LoggedLine, logs }
}

describe('an unreachable upstream is named in its log line, with its origin and the cause', () => {
  it('a refused connection: ECONNREFUSED', async () => {
    const port = await closedPort()
    const { status, json, line } = await callThrough('local-llm', `http://127.0.0.1:${port}/deep/path/v1`)
    expect(status).toBe(502)
    expect(json.error.code).toBe('upstream_unreachable')
    expect(line.meta).toMatchObject({
      upstream: 'local-llm',
      origin: `http://127.0.0.1:${port}`,
      code: 'upstream_unreachable',
      cause: 'ECONNREFUSED',
    })
    // The client's answer names neither the upstream's address nor the cause.
    expect(JSON.stringify(json)).not.toMatch(new RegExp(`${port}|ECONNREFUSED`))
  })

  it('a host name that cannot resolve: ENOTFOUND', async () => {
    const { status, line } = await callThrough('typo', 'https://api.no-such-host.invalid/deep/path/v1')
    expect(status).toBe(502)
    expect(line.meta).toMatchObject({
      upstream: 'typo',
      origin: 'https://api.no-such-host.invalid',
      code: 'upstream_unreachable',
      cause: 'ENOTFOUND',
    })
  })

  it('https:// to a plain-HTTP server: the TLS error code', async () => {
    const plain: MountedServer = await listen(
      http.createServer((_req, res) => res.end('plain')),
      '',
    )
    opened.push(plain)
    const port = new URL(plain.url).port
    const { status, line } = await callThrough('wrong-scheme', `https://127.0.0.1:${port}/deep/path/v1`, { timeouts: { connectMs: 5000 } })
    expect(status).toBe(502)
    expect(line.meta).toMatchObject({ upstream: 'wrong-scheme', origin: `https://127.0.0.1:${port}`, code: 'upstream_unreachable' })
    // OpenSSL 3 (every supported Node) reads the plain answer as a record of an unknown version.
    expect(line.meta?.cause).toMatch(/^ERR_SSL_(WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG)$/)
  })

  it('an https upstream with a certificate nobody trusts: DEPTH_ZERO_SELF_SIGNED_CERT', async () => {
    const tls = https.createServer(SELF_SIGNED, (_req, res) => res.end('{}'))
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
    opened.push({ close: () => new Promise((resolve) => tls.close(resolve)) })
    const { port } = tls.address() as AddressInfo
    const { status, line } = await callThrough('self-signed', `https://127.0.0.1:${port}/deep/path/v1`)
    expect(status).toBe(502)
    expect(line.meta).toMatchObject({
      upstream: 'self-signed',
      origin: `https://127.0.0.1:${port}`,
      code: 'upstream_unreachable',
      cause: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    })
  })

  it('an upstream that never answers: the timeout', async () => {
    // Never answers: the gateway's upstream timeout ends the call (closing the server drops its sockets).
    const server = await listen(
      http.createServer(() => {}),
      '',
    )
    opened.push(server)
    const port = new URL(server.url).port
    const { status, json, line } = await callThrough('slow', `http://127.0.0.1:${port}/deep/path/v1`, { timeouts: { upstreamMs: 200 } })
    expect(status).toBe(504)
    expect(json.error.code).toBe('upstream_timeout')
    expect(line.meta).toMatchObject({
      upstream: 'slow',
      origin: `http://127.0.0.1:${port}`,
      code: 'upstream_timeout',
      cause: 'UND_ERR_HEADERS_TIMEOUT',
    })
  })
})

describe('an OpenAI baseUrl without its API path', () => {
  const DOUBT = "model-gateway: an upstream's baseUrl has no API path; calls to it may all get its 404"

  it('is accepted with a warning at construction, and each 404 it brings is logged with the base URL meant', async () => {
    const mock = await startMockUpstream({ apiKey: SECRET })
    opened.push(mock)
    const { status, json, line, logs } = await callThrough('bare', mock.url)
    // The mock, like OpenAI, serves under /v1 alone: the call went to /chat/completions.
    expect(status).toBe(404)
    expect(json.error.code).toBe('unknown_url')
    expect(logs[0]).toEqual({ message: DOUBT, meta: { upstream: 'bare', origin: mock.url, hint: `did you mean '${mock.url}/v1'?` } })
    expect(line.meta).toMatchObject({ upstream: 'bare', status: 404, hint: `did you mean '${mock.url}/v1'?` })
  })

  it('says nothing of a baseUrl with a path, nor of its 404s', async () => {
    const mock = await startMockUpstream({ apiKey: SECRET })
    opened.push(mock)
    const { gateway, logs } = collectingGateway({
      upstreams: { proxied: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: SECRET } },
      models: [{ id: 'gpt-4o-mini', upstream: 'proxied' }],
    })
    const server = await serve(nodeHandler(gateway))
    opened.push({ close: () => gateway.close() }, server)
    const res = await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { mock: { status: 404 } }) })
    expect(res.status).toBe(404)
    expect(logs).toEqual([])
  })
})
