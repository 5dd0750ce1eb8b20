// A small Anthropic-speaking upstream for the Messages dialect's end-to-end tests: it records what it is sent and
// answers with fixed bytes, so a test can compare what its client got with what the upstream wrote, byte for byte.
import http from 'node:http'
import { createGateway, type Gateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, KEY_B, UPSTREAM_KEY } from './fixture.js'
import { listen } from './http.js'
import type { ServerKind } from './servers.js'

/** One request the upstream received; `rawHeaders` keeps repeated headers apart. */
export interface ReceivedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  rawHeaders: string[]
  body: string
}

/** A whole message, spaced as no JSON.stringify writes it: a re-serialised answer would not be equal. */
export const MESSAGE =
  '{"id": "msg_01UpstreamWhole", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", ' +
  '"content": [{"type": "text", "text": "Hello from upstream"}], "stop_reason": "end_turn", "stop_sequence": null, ' +
  '"usage": {"input_tokens": 12, "output_tokens": 4}}'

/** The events of a short streamed message, each whole, as Anthropic writes them (a `ping` among them). */
export const EVENTS = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01UpstreamStream","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'event: ping\ndata: {"type": "ping"}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" stream"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":12,"output_tokens":5}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
]

/** A token count, spaced as above. */
export const TOKEN_COUNT = '{"input_tokens": 42}'

/** An upstream error body as Anthropic writes one. */
export const OVERLOADED = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_upstream"}'

/** Models whose calls the upstream answers otherwise: an error, and a slow stream (to be cut by its client). */
export const MODELS = { overloaded: 'claude-overloaded', slow: 'claude-slow' } as const

/** The running upstream: its base URL and every request it got, in order. */
export interface AnthropicUpstream {
  url: string
  requests: ReceivedRequest[]
  close(): Promise<void>
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Writes the stream's events; a slow stream waits between them. */
async function stream(res: http.ServerResponse, model: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_upstream' })
  for (const event of EVENTS) {
    if (model === MODELS.slow) await pause(60)
    if (res.destroyed) return
    res.write(event)
  }
  res.end()
}

/** Starts the upstream on port 0. */
export async function startAnthropicUpstream(): Promise<AnthropicUpstream> {
  const requests: ReceivedRequest[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body })
      const parsed = body === '' ? {} : (JSON.parse(body) as { model?: string; stream?: boolean })
      const answer = (status: number, text: string) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_upstream' })
        res.end(text)
      }
      if (parsed.model === MODELS.overloaded) answer(529, OVERLOADED)
      else if (req.url === '/v1/messages/count_tokens') answer(200, TOKEN_COUNT)
      else if (parsed.stream === true) void stream(res, parsed.model ?? '')
      else answer(200, MESSAGE)
    })
  })
  const { url, close } = await listen(server)
  return { url, requests, close }
}

/** The gateway in front of an Anthropic upstream, mounted in a real server. */
export interface MessagesChain {
  url: string
  gateway: Gateway
  upstream: AnthropicUpstream
  close(): Promise<void>
}

/**
 * An Anthropic upstream, a gateway in front of it (Claude models on it, one known upstream by another name, and an
 * OpenAI model for the calls that cannot go to one) and a real server of `kind` hosting the gateway.
 */
export async function startMessagesChain(kind: ServerKind, overrides: Partial<GatewayOptions> = {}): Promise<MessagesChain> {
  const upstream = await startAnthropicUpstream()
  const gateway = createGateway({
    upstreams: {
      claude: { type: 'anthropic', baseUrl: upstream.url, apiKey: UPSTREAM_KEY },
      // Never called: the calls these tests make of it are refused before anything goes upstream.
      gpt: { type: 'openai', baseUrl: `${upstream.url}/openai/v1`, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'claude-gateway-test', upstream: 'claude', created: 1759000000 },
      { id: 'claude-renamed', upstream: 'claude', upstreamModel: 'claude-upstream-name', created: 1759000001 },
      ...Object.values(MODELS).map((id) => ({ id, upstream: 'claude' })),
      { id: 'gpt-4o-mini', upstream: 'gpt' },
    ],
    auth: { apiKeys: [KEY_A, KEY_B] },
    logger: { info() {}, warn() {}, error() {} },
    ...overrides,
  })
  const server = await kind.mount(gateway)
  return {
    url: server.url,
    gateway,
    upstream,
    async close() {
      await server.close()
      await gateway.close()
      await upstream.close()
    },
  }
}
