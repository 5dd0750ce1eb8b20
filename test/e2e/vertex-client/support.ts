// A gateway serving Vertex-format clients, on a mock that is every kind of upstream at once: Anthropic and Vertex AI's
// Claude (passthrough), Gemini and Vertex AI's Gemini (passthrough), and OpenAI (translated). And the Vertex clients
// pointed at it: they cannot skip their Google auth, so each gets an auth client that adds no header, and the
// gateway key in a header of its own.
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk'
import { GoogleGenAI } from '@google/genai'
import { OAuth2Client } from 'google-auth-library'
import { createGateway } from '../../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../../src/testing/index.js'
import type { Gateway, GatewayOptions, UsageEvent } from '../../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from '../../support/fixture.js'
import { NODE_KINDS } from '../../support/servers.js'

/** The project and location the clients put in their paths: accepted, never forwarded. */
export const PROJECT = 'client-project'
export const LOCATION = 'us-east5'

/** One model per kind of upstream, as the Vertex clients name them in their paths. */
export const MODELS = {
  /** Anthropic's API, configured as `claude-sonnet-4-5` and reached by its Vertex alias. */
  anthropic: 'claude-sonnet-4-5@20250929',
  /** Vertex AI's Claude. */
  vertexClaude: 'vx-claude',
  /** Google's Gemini API. */
  gemini: 'gemini-2.5-flash',
  /** Vertex AI's Gemini. */
  vertexGemini: 'vx-gemini',
  /** OpenAI: every call translated through the hub. */
  openai: 'gpt-4o-mini',
} as const

/** An auth client that adds no header: the gateway's key goes in a header of the caller's own. */
export class NoGoogleAuth extends OAuth2Client {
  override async getRequestHeaders(): Promise<Headers> {
    return new Headers()
  }
}

/** The running chain. */
export interface VertexClientFixture {
  url: string
  mock: MockUpstream
  gateway: Gateway
  usage: UsageEvent[]
  close(): Promise<void>
}

/** Starts the mock and a gateway on node:http, both on port 0; `overrides` replace top-level gateway options. */
export async function startVertexClientFixture(overrides: Partial<GatewayOptions> = {}): Promise<VertexClientFixture> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const usage: UsageEvent[] = []
  const quiet = () => {}
  const gateway = createGateway({
    upstreams: {
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      oa: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
      vertex: {
        type: 'vertex',
        project: 'upstream-project',
        location: 'us-central1',
        baseUrl: mock.url,
        credentials: mock.vertex.createServiceAccount(),
      },
    },
    models: [
      { id: 'claude-sonnet-4-5', upstream: 'claude', aliases: [MODELS.anthropic] },
      { id: MODELS.vertexClaude, upstream: 'vertex', upstreamModel: 'claude-sonnet-4-5@20250929' },
      { id: MODELS.gemini, upstream: 'gem' },
      { id: MODELS.vertexGemini, upstream: 'vertex', upstreamModel: 'gemini-2.5-flash' },
      { id: MODELS.openai, upstream: 'oa' },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { info: quiet, warn: quiet, error: quiet },
    onUsage: (event) => usage.push(event),
    ...overrides,
  })
  const server = await NODE_KINDS[0]!.mount(gateway)
  return {
    url: server.url,
    mock,
    gateway,
    usage,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/** `@anthropic-ai/vertex-sdk` at the gateway, the key in `x-api-key`. */
export function anthropicVertex(url: string, options: { key?: string; maxRetries?: number; timeout?: number } = {}): AnthropicVertex {
  return new AnthropicVertex({
    baseURL: `${url}/v1`,
    region: LOCATION,
    projectId: PROJECT,
    authClient: new NoGoogleAuth(),
    defaultHeaders: options.key === '' ? {} : { 'x-api-key': options.key ?? KEY_A },
    maxRetries: options.maxRetries ?? 0,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  })
}

/** `@google/genai` in Vertex mode at the gateway (its default API version, `v1beta1`, unless given), the key in `x-goog-api-key`. */
export function genaiVertex(
  url: string,
  options: { key?: string; apiVersion?: string; headers?: Record<string, string> } = {},
): GoogleGenAI {
  return new GoogleGenAI({
    vertexai: true,
    project: PROJECT,
    location: LOCATION,
    httpOptions: {
      baseUrl: url,
      ...(options.apiVersion === undefined ? {} : { apiVersion: options.apiVersion }),
      headers: { ...(options.key === '' ? {} : { 'x-goog-api-key': options.key ?? KEY_A }), ...options.headers },
    },
    googleAuthOptions: { authClient: new NoGoogleAuth() },
  })
}
