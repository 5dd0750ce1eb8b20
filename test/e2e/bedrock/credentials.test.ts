import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { createGateway } from '../../../src/gateway.js'
import { isGatewayError } from '../../../src/index.js'
import { MOCK_AWS_CREDENTIALS, type MockAwsCredentials } from '../../../src/testing/index.js'
import { type BedrockFixture, CLAUDE_ON_BEDROCK, startBedrockFixture } from '../../support/bedrock.js'
import { KEY_A } from '../../support/fixture.js'
import { eventually } from '../../support/http.js'

// The credential machinery for real: static keys, a provider function, the AWS default chain through environment
// variables and through the container credentials endpoint on loopback (with rotation), and each failure a clear
// 502 whose log line says why, never a secret.

const ROLE_A: MockAwsCredentials = { accessKeyId: 'ASIAROLEA00000000001', secretAccessKey: 'role-a-secret', sessionToken: 'role-a-token' }
const ROLE_B: MockAwsCredentials = { accessKeyId: 'ASIAROLEB00000000002', secretAccessKey: 'role-b-secret', sessionToken: 'role-b-token' }

let fx: BedrockFixture | undefined
const saved = { ...process.env }
afterEach(async () => {
  await fx?.close()
  fx = undefined
  for (const key of Object.keys(process.env)) if (key.startsWith('AWS_')) delete process.env[key]
  Object.assign(process.env, saved)
})

/** The default chain with nothing but what a test sets: no shared files, no IMDS. */
function bareChain(): void {
  process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config'
  process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials'
  process.env.AWS_EC2_METADATA_DISABLED = 'true'
}

const ask = (text: string) =>
  new Anthropic({ baseURL: fx!.url, apiKey: KEY_A, maxRetries: 0 }).messages.create({
    model: CLAUDE_ON_BEDROCK,
    max_tokens: 32,
    messages: [{ role: 'user', content: text }],
  })
const signedBy = () => /Credential=([^/]+)\//.exec(String(fx!.mock.requests.at(-1)?.headers.authorization))?.[1]
const logged = () => JSON.stringify(fx!.logs)

describe('credentials', () => {
  it('static keys with a session token: signed, the token sent as x-amz-security-token', async () => {
    fx = await startBedrockFixture({ upstream: { credentials: ROLE_A }, mock: { bedrock: { credentials: [ROLE_A] } } })
    expect((await ask('static')).content).toEqual([{ type: 'text', text: 'Echo: static' }])
    expect(signedBy()).toBe(ROLE_A.accessKeyId)
    expect(fx.mock.requests.at(-1)?.headers['x-amz-security-token']).toBe(ROLE_A.sessionToken)
  })

  it('a provider function: called once, its credentials kept while they live', async () => {
    let calls = 0
    const provider = async () => {
      calls++
      return { ...ROLE_B, expiration: new Date(Date.now() + 3_600_000) }
    }
    fx = await startBedrockFixture({ upstream: { credentials: provider }, mock: { bedrock: { credentials: [ROLE_B] } } })
    for (const text of ['one', 'two', 'three']) expect((await ask(text)).content[0]).toMatchObject({ text: `Echo: ${text}` })
    expect(calls).toBe(1)
  })

  it('the default chain through environment variables', async () => {
    bareChain()
    process.env.AWS_ACCESS_KEY_ID = ROLE_A.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY = ROLE_A.secretAccessKey
    process.env.AWS_SESSION_TOKEN = ROLE_A.sessionToken
    fx = await startBedrockFixture({ upstream: {}, mock: { bedrock: { credentials: [ROLE_A] } } })
    expect((await ask('from env')).content[0]).toMatchObject({ text: 'Echo: from env' })
    expect(signedBy()).toBe(ROLE_A.accessKeyId)
  })

  it('the default chain through the container endpoint on loopback, rotated before expiry and never fetched per call', async () => {
    bareChain()
    let served = ROLE_A
    let expiresInMs = 4 * 60_000
    let fetches = 0
    const endpoint = http.createServer((req, res) => {
      fetches++
      expect(req.headers.authorization).toBe('container-token')
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          AccessKeyId: served.accessKeyId,
          SecretAccessKey: served.secretAccessKey,
          Token: served.sessionToken,
          Expiration: new Date(Date.now() + expiresInMs).toISOString(),
        }),
      )
    })
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
    try {
      process.env.AWS_CONTAINER_CREDENTIALS_FULL_URI = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/creds`
      process.env.AWS_CONTAINER_AUTHORIZATION_TOKEN = 'container-token'
      const accepted = [ROLE_A]
      fx = await startBedrockFixture({ upstream: {}, mock: { bedrock: { credentials: accepted } } })
      await ask('first')
      expect(signedBy()).toBe(ROLE_A.accessKeyId)
      // AWS rotates the role's credentials: the old ones stay good until they expire, the new ones are served.
      served = ROLE_B
      expiresInMs = 3_600_000
      accepted.push(ROLE_B)
      const fetched = fetches
      await ask('second') // still A (4 minutes left): a refresh starts in the background
      expect(signedBy()).toBe(ROLE_A.accessKeyId)
      await fx.mock.waitFor(() => fetches > fetched)
      // The refresh lands: the next calls are signed with B.
      await eventually(async () => {
        await ask('third')
        return signedBy() === ROLE_B.accessKeyId
      })
      accepted.splice(0, 1) // A expired
      const before = fetches
      for (const text of ['fourth', 'fifth']) expect((await ask(text)).content[0]).toMatchObject({ text: `Echo: ${text}` })
      expect(signedBy()).toBe(ROLE_B.accessKeyId)
      expect(fetches).toBe(before)
    } finally {
      await new Promise((resolve) => endpoint.close(resolve))
    }
  })

  it('no credentials anywhere: a 502 upstream_auth_failed, the log naming the cause, and the next call tries again', async () => {
    bareChain()
    fx = await startBedrockFixture({ upstream: {} })
    const error = await ask('nothing').catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 502, error: { error: { type: 'api_error' } } })
    expect(logged()).toContain('AWS_NO_CREDENTIALS')
    process.env.AWS_ACCESS_KEY_ID = MOCK_AWS_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY = MOCK_AWS_CREDENTIALS.secretAccessKey
    expect((await ask('now there are')).content[0]).toMatchObject({ text: 'Echo: now there are' })
  })

  it('a clock 10 minutes off: Bedrock refuses the signature, the client gets a clear 502, the log says why, never the secret', async () => {
    fx = await startBedrockFixture({ mock: { bedrock: { clockSkewMs: 10 * 60_000 } } })
    const error = await ask('skewed').catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 502, message: expect.stringContaining('could not authenticate with the upstream') })
    expect(logged()).toContain('InvalidSignatureException: Signature expired')
    expect(logged()).not.toContain(MOCK_AWS_CREDENTIALS.secretAccessKey)
    fx.mock.resetRequests()
  })

  it('a wrong secret: 403 InvalidSignatureException upstream, 502 to the client', async () => {
    fx = await startBedrockFixture({ upstream: { credentials: { ...MOCK_AWS_CREDENTIALS, secretAccessKey: 'wrong-secret-value' } } })
    await expect(ask('wrong')).rejects.toMatchObject({ status: 502 })
    expect(logged()).toContain('InvalidSignatureException: The request signature we calculated does not match')
    expect(logged()).not.toContain('wrong-secret-value')
  })

  it('a Bedrock API key as Bearer, nothing signed; a wrong one is a 502', async () => {
    fx = await startBedrockFixture({ upstream: { apiKey: 'bedrock-api-key-123' }, mock: { bedrock: { apiKeys: ['bedrock-api-key-123'] } } })
    expect((await ask('keyed')).content[0]).toMatchObject({ text: 'Echo: keyed' })
    expect(fx.mock.requests.at(-1)?.headers.authorization).toBe('Bearer bedrock-api-key-123')
    expect(fx.mock.requests.at(-1)?.headers['x-amz-date']).toBeUndefined()
    fx.mock.requests.length = 0
    await fx.close()
    fx = await startBedrockFixture({ upstream: { apiKey: 'bedrock-api-key-bad' }, mock: { bedrock: { apiKeys: ['bedrock-api-key-123'] } } })
    await expect(ask('bad key')).rejects.toMatchObject({ status: 502 })
  })
})

describe('construction errors', () => {
  const build = (upstream: Record<string, unknown>) => () =>
    createGateway({
      upstreams: { aws: { type: 'bedrock', ...upstream } },
      models: [{ id: 'c', upstream: 'aws', upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0' }],
      auth: { apiKeys: [KEY_A] },
    })
  const message = (fn: () => unknown) => {
    try {
      fn()
    } catch (error) {
      if (isGatewayError(error)) return `${error.code}: ${error.message}`
      throw error
    }
    return 'no error'
  }

  it('a wrong region, a missing one, a credentials object with a typo, credentials and apiKey together', () => {
    expect(message(build({ region: 'us-east' }))).toMatch(
      /^invalid_options: upstreams\.aws\.region must be an AWS region such as 'us-east-1'/,
    )
    expect(message(build({}))).toMatch(/needs region \(such as 'us-east-1'\) or baseUrl/)
    expect(message(build({ region: 'us-east-1', credentials: { accessKeyId: 'A', secretKey: 'S' } }))).toMatch(
      /credentials\.secretKey is not an option; did you mean `secretAccessKey`\?/,
    )
    expect(message(build({ region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS, apiKey: 'k' }))).toMatch(
      /credentials or a Bedrock API key/,
    )
    expect(message(build({ baseUrl: 'https://proxy.example.com', credentials: MOCK_AWS_CREDENTIALS }))).toMatch(/region is needed to sign/)
    expect(
      message(build({ baseUrl: 'https://bedrock-runtime.eu-west-3.amazonaws.com/model/x/invoke', credentials: MOCK_AWS_CREDENTIALS })),
    ).toMatch(/did you mean 'https:\/\/bedrock-runtime\.eu-west-3\.amazonaws\.com'/)
    expect(message(build({ region: 'us-east-1', maxFrameBytes: 10 }))).toMatch(/maxFrameBytes must be an integer of at least 1024/)
    expect(message(build({ region: 'eu-central-1', credentials: MOCK_AWS_CREDENTIALS }))).toBe('no error')
  })
})
