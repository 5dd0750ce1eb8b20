import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { mockAccessToken, startVertexFixture, VERTEX_GEMINI, type VertexFixture } from '../support/vertex.js'

// The credential machinery for real, offline: a service-account key generated here whose token_uri is the mock's
// loopback token endpoint (tokens issued short-lived, refreshed before they lapse), a token function, ADC, express
// mode; and each way it fails (unreachable endpoint, a clock 10 minutes off, an unknown account, a refused token) a
// 502 upstream_auth_failed in the client's dialect whose log line names the cause and no secret.

let fx: VertexFixture | undefined
afterEach(async () => {
  await fx?.close()
  fx = undefined
})

const chat = (f: VertexFixture, text: string, model = VERTEX_GEMINI) =>
  call(`${f.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: { model, messages: [{ role: 'user', content: text }] } })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const tokensSent = (f: VertexFixture) =>
  new Set(f.mock.requests.filter((r) => r.path.includes('/publishers/')).map((r) => r.headers.authorization))

/** The failed attempt's log line, with what it says of the cause. */
const failedLine = (f: VertexFixture) => f.logs.find((line) => line.message === 'model-gateway: upstream attempt failed')

/** No log line carries the key's private key, its token, or the client's key. */
function expectNoSecretLogged(f: VertexFixture): void {
  const text = JSON.stringify(f.logs)
  expect(text).not.toContain(f.key.private_key.slice(40, 80))
  expect(text).not.toContain('ya29.')
  expect(text).not.toContain(KEY_A)
}

describe('a service-account key with a loopback token_uri', () => {
  it('one token for many calls, refreshed in the background once it has less than 5 minutes left', async () => {
    // 301 s: kept at first, inside the refresh window a second later.
    fx = await startVertexFixture({ mock: { vertex: { tokenTtlSeconds: 301 } } })
    for (const text of ['one', 'two', 'three']) expect((await chat(fx, text)).status).toBe(200)
    expect(fx.mock.vertex.tokensIssued).toBe(1)
    await sleep(1100)
    expect((await chat(fx, 'four')).status).toBe(200)
    const f = fx
    await eventually(() => f.mock.vertex.tokensIssued === 2)
    expect((await chat(fx, 'five')).status).toBe(200)
    expect(tokensSent(fx).size).toBe(2)
    expect(fx.mock.vertex.refusedTokens).toBe(0)
  })

  it('tokens that expire within seconds are fetched anew, never sent expired', async () => {
    fx = await startVertexFixture({ mock: { vertex: { tokenTtlSeconds: 1 } } })
    expect((await chat(fx, 'before expiry')).status).toBe(200)
    await sleep(1100)
    expect((await chat(fx, 'after expiry')).status).toBe(200)
    expect(fx.mock.vertex.refusedTokens).toBe(0)
    expect(tokensSent(fx).size).toBe(2)
  })

  it('a key file path is read at construction; project defaults to the key’s project_id', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'vertex-key-')), 'key.json')
    fx = await startVertexFixture({
      upstream: (mock) => {
        writeFileSync(file, JSON.stringify(mock.vertex.createServiceAccount('file@key-project.iam.gserviceaccount.com', 'key-project')))
        return { project: undefined, credentials: file }
      },
    })
    expect((await chat(fx, 'from a file')).status).toBe(200)
    expect(fx.mock.requests.at(-1)!.path).toContain('/v1/projects/key-project/locations/us-central1/')
  })
})

describe('credentials as a token function', () => {
  it('a bare token is asked for on each call (the function keeps its own cache)', async () => {
    let asked = 0
    fx = await startVertexFixture({
      upstream: (_mock, key) => ({
        credentials: async () => {
          asked++
          return (await mockAccessToken(key)).token
        },
      }),
    })
    expect((await chat(fx, 'fn one')).status).toBe(200)
    expect((await chat(fx, 'fn two')).status).toBe(200)
    expect(asked).toBe(2)
  })

  it('a token with its expiry is kept until shortly before it', async () => {
    let asked = 0
    fx = await startVertexFixture({
      upstream: (_mock, key) => ({
        credentials: () => {
          asked++
          return mockAccessToken(key)
        },
      }),
    })
    for (const text of ['kept one', 'kept two', 'kept three', 'kept four']) expect((await chat(fx, text)).status).toBe(200)
    // The first answer shows that the function says when its tokens expire; from then on one token is kept.
    expect(asked).toBe(2)
    expect(tokensSent(fx).size).toBe(2)
    expect(fx.mock.vertex.refusedTokens).toBe(0)
  })

  it('a function that throws: 502 upstream_auth_failed, the log naming the function', async () => {
    fx = await startVertexFixture({
      upstream: {
        credentials: () => {
          throw new Error('secret-in-message')
        },
      },
    })
    const res = await chat(fx, 'fn throws')
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_auth_failed')
    expect(failedLine(fx)?.fields).toMatchObject({ code: 'upstream_auth_failed', cause: 'token_function_failed' })
    expect(JSON.stringify(fx.logs)).not.toContain('secret-in-message')
  })

  it('a token the upstream refuses: 502 upstream_auth_failed, not the client’s 401', async () => {
    fx = await startVertexFixture({ upstream: { credentials: async () => 'ya29.never-issued' } })
    const res = await chat(fx, 'refused token')
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_auth_failed')
    expect(fx.mock.vertex.refusedTokens).toBe(1)
  })
})

describe('a token the upstream refuses', () => {
  it('is dropped: the refused call is a 502, the next call fetches a new token and succeeds', async () => {
    fx = await startVertexFixture()
    expect((await chat(fx, 'before revocation')).status).toBe(200)
    fx.mock.vertex.revokeTokens()
    const refused = await chat(fx, 'revoked token')
    expect(refused.status).toBe(502)
    expect(refused.json.error.code).toBe('upstream_auth_failed')
    expect((await chat(fx, 'after revocation')).status).toBe(200)
    expect(fx.mock.vertex.tokensIssued).toBe(2)
    expectNoSecretLogged(fx)
  })
})

describe('credential failures: a 502 in the client’s dialect, the cause in the log, the process alive', () => {
  it('an unreachable token endpoint, from each client dialect', async () => {
    fx = await startVertexFixture({ upstream: (_mock, key) => ({ credentials: { ...key, token_uri: 'http://127.0.0.1:1/token' } }) })
    const f = fx
    const claude = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
    const answers = await Promise.all([
      chat(f, 'unreachable chat'),
      call(`${f.url}/v1/responses`, { headers: bearer(KEY_A), body: { model: VERTEX_GEMINI, input: 'unreachable responses' } }),
      call(`${f.url}/v1beta/models/${VERTEX_GEMINI}:generateContent`, {
        headers: { 'x-goog-api-key': KEY_A },
        body: { contents: [{ parts: [{ text: 'unreachable gemini' }] }] },
      }),
      call(`${f.url}/v1/messages`, {
        headers: claude,
        body: { model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
      }),
    ])
    // Google's errors name only the statuses google.rpc.Code maps to: its clients get UNAVAILABLE's 503.
    expect(answers.map((a) => a.status)).toEqual([502, 502, 503, 502])
    expect(answers[0]!.json.error.code).toBe('upstream_auth_failed')
    expect(answers[1]!.json.error.code).toBe('upstream_auth_failed')
    expect(answers[2]!.json.error.status).toBe('UNAVAILABLE')
    expect(answers[3]!.json).toMatchObject({ type: 'error', error: { type: 'api_error' } })
    expect(failedLine(f)?.fields).toMatchObject({ code: 'upstream_auth_failed', cause: 'token_endpoint_unreachable' })
    expectNoSecretLogged(f)
    expect((await call(`${f.url}/v1/models`, { headers: bearer(KEY_A) })).status).toBe(200)
  })

  it('a clock 10 minutes off: clock_skew in the log; once the clocks agree the next call gets a token', async () => {
    fx = await startVertexFixture()
    fx.mock.vertex.clockOffsetMs = -10 * 60_000
    const res = await chat(fx, 'skewed')
    expect(res.status).toBe(502)
    expect(failedLine(fx)?.fields).toMatchObject({ code: 'upstream_auth_failed', cause: 'clock_skew' })
    fx.mock.vertex.clockOffsetMs = 0
    expect((await chat(fx, 'clocks agree')).status).toBe(200)
    expectNoSecretLogged(fx)
  })

  it('a key the token endpoint does not know: token_endpoint_refused', async () => {
    fx = await startVertexFixture({
      upstream: (_mock, key) => ({ credentials: { ...key, client_email: 'nobody@mock-project.iam.gserviceaccount.com' } }),
    })
    const res = await chat(fx, 'unknown account')
    expect(res.status).toBe(502)
    expect(failedLine(fx)?.fields).toMatchObject({ code: 'upstream_auth_failed', cause: 'token_endpoint_refused' })
    expect(fx.mock.vertex.tokenRequests).toBe(1)
    expectNoSecretLogged(fx)
  })
})

describe('Application Default Credentials and express mode', () => {
  const saved = { ...process.env }
  afterEach(() => {
    process.env = { ...saved }
  })

  it('GOOGLE_APPLICATION_CREDENTIALS naming a service-account key: its token_uri honoured', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'vertex-adc-')), 'adc.json')
    fx = await startVertexFixture({
      upstream: (mock) => {
        writeFileSync(file, JSON.stringify(mock.vertex.createServiceAccount('adc@mock-project.iam.gserviceaccount.com')))
        process.env.GOOGLE_APPLICATION_CREDENTIALS = file
        return { credentials: undefined }
      },
    })
    expect((await chat(fx, 'adc file')).status).toBe(200)
    expect(fx.mock.vertex.tokensIssued).toBe(1)
  })

  it('no credentials anywhere: google-auth-library finds none, and the log says so', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'vertex-home-'))
    delete process.env.GOOGLE_APPLICATION_CREDENTIALS
    Object.assign(process.env, { HOME: home, CLOUDSDK_CONFIG: home, METADATA_SERVER_DETECTION: 'none' })
    fx = await startVertexFixture({ upstream: { credentials: undefined } })
    const res = await chat(fx, 'no adc')
    expect(res.status).toBe(502)
    expect(failedLine(fx)?.fields).toMatchObject({ code: 'upstream_auth_failed', cause: 'no_credentials' })
  })

  it('express mode: an API key as x-goog-api-key, Gemini models at publishers/google without a project', async () => {
    fx = await startVertexFixture({
      mock: { vertex: { apiKey: 'vertex-express-key-0123' } },
      upstream: { credentials: undefined, project: undefined, location: undefined, apiKey: 'vertex-express-key-0123' },
    })
    expect((await chat(fx, 'express')).status).toBe(200)
    const sent = fx.mock.requests.at(-1)!
    expect(sent.path).toBe('/v1/publishers/google/models/gemini-2.5-flash:generateContent')
    expect(sent.headers['x-goog-api-key']).toBe('vertex-express-key-0123')
    expect(sent.headers.authorization).toBeUndefined()
    expect(fx.mock.vertex.tokenRequests).toBe(0)
  })
})
