import { createSign } from 'node:crypto'
import { createGateway } from '../../src/gateway.js'
import { type MockUpstream, type MockUpstreamOptions, startMockUpstream, type VertexServiceAccountKey } from '../../src/testing/index.js'
import type { Gateway, GatewayOptions, UsageEvent } from '../../src/types.js'
import { KEY_A } from './fixture.js'
import { NODE_KINDS } from './servers.js'

/** The Gemini and Claude models a Vertex AI fixture serves, as Vertex AI names them. */
export const VERTEX_GEMINI = 'gemini-2.5-flash'
export const VERTEX_CLAUDE = 'claude-sonnet-4-5@20250929'

/** One logged line: its level, message and fields. */
export interface LogLine {
  level: 'warn' | 'error'
  message: string
  fields: Record<string, unknown> | undefined
}

/** A gateway on node:http whose upstream is Vertex AI on the mock, with a service account generated for it. */
export interface VertexFixture {
  url: string
  mock: MockUpstream
  key: VertexServiceAccountKey
  gateway: Gateway
  usage: UsageEvent[]
  logs: LogLine[]
  close(): Promise<void>
}

/** `upstream` overrides the Vertex upstream's options (credentials: the generated key unless given). */
export async function startVertexFixture(
  options: {
    mock?: MockUpstreamOptions
    upstream?: Record<string, unknown> | ((mock: MockUpstream, key: VertexServiceAccountKey) => Record<string, unknown>)
    gateway?: Partial<GatewayOptions>
  } = {},
): Promise<VertexFixture> {
  const mock = await startMockUpstream(options.mock)
  const key = mock.vertex.createServiceAccount()
  const upstream = typeof options.upstream === 'function' ? options.upstream(mock, key) : options.upstream
  const usage: UsageEvent[] = []
  const logs: LogLine[] = []
  const log = (level: LogLine['level']) => (message: string, fields?: Record<string, unknown>) => logs.push({ level, message, fields })
  const gateway = createGateway({
    upstreams: {
      vertex: {
        type: 'vertex',
        project: 'mock-project',
        location: 'us-central1',
        baseUrl: mock.url,
        credentials: key,
        ...upstream,
      },
    },
    models: [
      { id: VERTEX_GEMINI, upstream: 'vertex' },
      { id: 'claude-sonnet-4-5', upstream: 'vertex', upstreamModel: VERTEX_CLAUDE },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { warn: log('warn'), error: log('error') },
    onUsage: (u) => usage.push(u),
    ...options.gateway,
  } as GatewayOptions)
  const server = await NODE_KINDS[0]!.mount(gateway)
  return {
    url: server.url,
    mock,
    key,
    gateway,
    usage,
    logs,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/**
 * An access token from the mock's token endpoint for `key`, got the way Google documents the JWT bearer grant and
 * written here apart from the gateway's own exchange, so a test of one does not lean on the other.
 */
export async function mockAccessToken(key: VertexServiceAccountKey): Promise<{ token: string; expiresAt: number }> {
  const iat = Math.floor(Date.now() / 1000)
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const unsigned = `${encode({ alg: 'RS256', typ: 'JWT', kid: key.private_key_id })}.${encode({
    iss: key.client_email,
    scope: 'https://www.googleapis.com/auth/cloud-platform',
    aud: key.token_uri,
    iat,
    exp: iat + 3600,
  })}`
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key).toString('base64url')
  const res = await fetch(key.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: `${unsigned}.${signature}` }),
  })
  const json = (await res.json()) as { access_token: string; expires_in: number }
  if (!res.ok) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(json)}`)
  return { token: json.access_token, expiresAt: Date.now() + json.expires_in * 1000 }
}
