import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { resolveUpstream } from '../../src/config/upstream.js'
import { vertexAnthropicBody } from '../../src/dialects/vertex/index.js'
import { createGateway } from '../../src/gateway.js'

// A Vertex AI upstream's options checked at construction: each mistake a clear invalid_options naming the option,
// never the key; the endpoint host and base path each location gives; the Claude body as Vertex AI takes it.

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const KEY = {
  type: 'service_account',
  project_id: 'key-project',
  private_key_id: 'abc123',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: 'gw@key-project.iam.gserviceaccount.com',
  token_uri: 'http://127.0.0.1:9/token',
}

const vertex = (options: Record<string, unknown>) => ({
  type: 'vertex',
  location: 'us-central1',
  project: 'my-project',
  credentials: KEY,
  ...options,
})

/** The construction error of a gateway with this Vertex upstream. */
function problem(options: Record<string, unknown>): string {
  try {
    createGateway({ upstreams: { v: vertex(options) }, models: [{ id: 'gemini-2.5-flash', upstream: 'v' }] } as never)
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_options' })
    return (error as Error).message
  }
  throw new Error('no construction error')
}

describe('Vertex AI options at construction', () => {
  it('a missing project, with no key to take it from', () => {
    expect(problem({ project: undefined, credentials: { ...KEY, project_id: undefined } })).toMatch(/upstreams\.v\.project is required/)
  })

  it('a missing or wrong location', () => {
    expect(problem({ location: undefined })).toMatch(/upstreams\.v\.location is required/)
    for (const location of ['us-central', 'US-CENTRAL1', 'us central1', 'https://us-central1-aiplatform.googleapis.com', 42]) {
      expect(problem({ location })).toMatch(/upstreams\.v\.location must be 'global', 'us', 'eu' or a region such as 'us-central1'/)
    }
  })

  it('a project id Google would not take', () => {
    expect(problem({ project: 'My Project' })).toMatch(/upstreams\.v\.project must be a Google Cloud project id/)
  })

  it('a baseUrl that runs into a call’s path is refused with the host root meant', () => {
    expect(problem({ baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l' })).toContain(
      "did you mean 'https://us-central1-aiplatform.googleapis.com'?",
    )
    expect(problem({ baseUrl: 'https://proxy.example/v1' })).toContain("did you mean 'https://proxy.example'?")
    expect(problem({ baseUrl: 'https://proxy.example/?key=1' })).toMatch(/must not carry a query/)
  })

  it('a malformed key: the field named, never its value', () => {
    const message = problem({ credentials: { ...KEY, private_key: '-----BEGIN PRIVATE KEY-----\nnot-a-key\n-----END PRIVATE KEY-----' } })
    expect(message).toMatch(/upstreams\.v\.credentials\.private_key is not a PEM private key/)
    expect(message).not.toContain('not-a-key')
    expect(problem({ credentials: { ...KEY, client_email: undefined } })).toMatch(/client_email must be/)
    expect(problem({ credentials: { ...KEY, type: 'authorized_user' } })).toMatch(/only 'service_account' keys/)
    expect(problem({ credentials: { ...KEY, token_uri: 'ftp://x' } })).toMatch(/token_uri must be an http\(s\) URL/)
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    expect(problem({ credentials: { ...KEY, private_key: ec } })).toMatch(/must be an RSA key/)
  })

  it('a key file that is missing or not JSON', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vertex-opt-'))
    expect(problem({ credentials: path.join(dir, 'absent.json') })).toMatch(/cannot read the key file .*\(ENOENT\)/)
    writeFileSync(path.join(dir, 'bad.json'), 'not json')
    expect(problem({ credentials: path.join(dir, 'bad.json') })).toMatch(/is not JSON/)
  })

  it('credentials and apiKey together, credentials of another kind, an option of another type', () => {
    expect(problem({ apiKey: 'k-0123456789' })).toMatch(/takes credentials or apiKey \(express mode\), not both/)
    expect(problem({ credentials: 42 })).toMatch(/credentials must be a service-account key object, a key file path or a function/)
    expect(problem({ anthropicVersion: '2023-06-01' })).toMatch(/anthropicVersion is an option of type 'anthropic' upstreams only/)
    expect(problem({ region: 'us-east-1' })).toMatch(/upstreams\.v\.region/)
  })
})

describe('Vertex AI endpoints', () => {
  const resolved = (options: Record<string, unknown>) => resolveUpstream('v', vertex(options))

  it('global, a multi-region, a region; a configured host root gets the same path', () => {
    expect(resolved({ location: 'global' })).toMatchObject({
      origin: 'https://aiplatform.googleapis.com',
      basePath: '/v1/projects/my-project/locations/global',
    })
    expect(resolved({ location: 'eu' }).origin).toBe('https://aiplatform.eu.rep.googleapis.com')
    expect(resolved({ location: 'europe-west4' })).toMatchObject({
      origin: 'https://europe-west4-aiplatform.googleapis.com',
      basePath: '/v1/projects/my-project/locations/europe-west4',
    })
    expect(resolved({ baseUrl: 'http://127.0.0.1:8080/vertex/' })).toMatchObject({
      origin: 'http://127.0.0.1:8080',
      basePath: '/vertex/v1/projects/my-project/locations/us-central1',
    })
    expect(resolved({ project: undefined }).basePath).toBe('/v1/projects/key-project/locations/us-central1')
  })

  it('express mode: no project, /v1 on the global host, the key as x-goog-api-key', () => {
    const upstream = resolveUpstream('v', { type: 'vertex', apiKey: 'express-key-0123' })
    expect(upstream).toMatchObject({ origin: 'https://aiplatform.googleapis.com', basePath: '/v1', authorizer: undefined })
    expect(upstream.keys[0]?.headers).toEqual(['x-goog-api-key', 'express-key-0123'])
  })

  it('each model’s paths: Gemini at publishers/google, Claude at publishers/anthropic (the version after @ kept)', () => {
    const upstream = resolved({})
    const gemini = upstream.dialect.forModel!('gemini-2.5-pro')!
    const claude = upstream.dialect.forModel!('claude-opus-4-1@20250805')!
    expect(gemini.upstreamPath(upstream.basePath, 'gemini-2.5-pro', 'generateContent', true)).toBe(
      '/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    )
    expect(gemini.upstreamPath(upstream.basePath, 'gemini-2.5-pro', 'countTokens', false)).toMatch(/gemini-2\.5-pro:countTokens$/)
    expect(claude.upstreamPath(upstream.basePath, 'claude-opus-4-1@20250805', 'messages', false)).toMatch(
      /publishers\/anthropic\/models\/claude-opus-4-1@20250805:rawPredict$/,
    )
    expect(claude.upstreamPath(upstream.basePath, 'claude-opus-4-1@20250805', 'messages.countTokens', false)).toMatch(
      /publishers\/anthropic\/models\/count-tokens:rawPredict$/,
    )
    expect(gemini.otelProviderName).toBe('gcp.vertex_ai')
    expect(claude.otelProviderName).toBe('gcp.vertex_ai')
  })
})

describe('the Claude body as Vertex AI takes it', () => {
  const body = (value: unknown) => Buffer.from(JSON.stringify(value))
  const read = (buffer: Buffer) => JSON.parse(buffer.toString('utf8'))

  it('anthropic_version first, no model; a token count keeps its model', () => {
    const message = { model: 'claude-x', max_tokens: 5, stream: true, messages: [] }
    expect(read(vertexAnthropicBody(body(message), 'messages'))).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 5,
      stream: true,
      messages: [],
    })
    expect(Object.keys(read(vertexAnthropicBody(body(message), 'messages')))[0]).toBe('anthropic_version')
    expect(read(vertexAnthropicBody(body({ model: 'claude-x', messages: [] }), 'messages.countTokens'))).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      model: 'claude-x',
      messages: [],
    })
    expect(read(vertexAnthropicBody(body({ anthropic_version: 'vertex-2023-10-16', messages: [] }), 'messages'))).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      messages: [],
    })
  })
})
