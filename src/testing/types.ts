// The mock upstream's public types: its options, its per-request controls, what it records and what it hands back.

import type { IncomingHttpHeaders, Server } from 'node:http'
import type { AzureMockOptions } from './azure.js'
import type { VertexMock, VertexMockOptions } from './vertex.js'

/** What `startMockUpstream` accepts; every field is optional. */
export interface MockUpstreamOptions {
  /** Port to listen on (default 0: a free port). */
  port?: number
  /** Interface to listen on (default `'127.0.0.1'`). */
  host?: string
  /** Default delay in ms before response headers, before the first frame for streams (default 0). */
  delayMs?: number
  /** A key every request must carry (`Authorization: Bearer`, `x-goog-api-key` or `?key=`, `x-api-key`), else rejected like the real APIs. */
  apiKey?: string | undefined
  /** Record every request in `requests` (default true; turn it off for benchmarks). */
  record?: boolean
  /** Vertex AI: its token endpoint's token lifetime and clock, and an express-mode key. */
  vertex?: VertexMockOptions
  /** What the Bedrock routes (`/model/{id}/…`) accept; read on every request, so a test may rotate credentials. */
  bedrock?: MockBedrockOptions
  /**
   * Azure OpenAI's paths (`/openai/v1/…`, `/openai/deployments/{deployment}/…?api-version=`): the `api-key` they take
   * (default `apiKey`) and the Entra ID tokens (Bearer) they accept (default none). @default undefined
   */
  azure?: AzureMockOptions
}

/** AWS credentials the mock's Bedrock routes verify SigV4 signatures with. */
export interface MockAwsCredentials {
  accessKeyId: string
  secretAccessKey: string
  /** Required as `x-amz-security-token` when set (temporary credentials). */
  sessionToken?: string
}

/** What the mock's Bedrock routes accept. */
export interface MockBedrockOptions {
  /** Credentials whose signatures are accepted (default: `MOCK_AWS_CREDENTIALS`); change the array to rotate them. */
  credentials?: MockAwsCredentials[]
  /** Bedrock API keys accepted as `Authorization: Bearer` (default: `apiKey`, if set). */
  apiKeys?: string[]
  /** Added to the mock's clock when it checks a signature's time (AWS allows 5 minutes either way). @default 0 */
  clockSkewMs?: number
}

/** A request as the mock received it, and what it answered. */
export interface RecordedRequest {
  /** The request method. */
  method: string
  /** The request target as received, including the query string. */
  path: string
  /** The request headers, names lower-cased. */
  headers: IncomingHttpHeaders
  /** The body decoded as UTF-8 (`''` when empty). */
  body: string
  /** The body the mock answered with, as written so far (stream frames included). */
  response: string
}

/** Controls accepted in the optional top-level body field `mock` (or given to `steer`). */
export interface MockControls {
  /** Wait this many ms before sending headers (streams: before the first frame); default: the server's `delayMs`. */
  delay_ms?: number
  /** Answer with this status and `error_body` (default: an error in the route's family shape). */
  status?: number
  /** Body for `status`: an object or array is sent as JSON, a string as is. */
  error_body?: unknown
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>
  /** Number of content deltas in a stream (default 5). */
  chunks?: number
  /** Streams only: send the response head at once, then wait this many ms before the first frame (after `delay_ms`). */
  first_frame_delay_ms?: number
  /** Delay in ms between stream frames (default 0). */
  chunk_delay_ms?: number
  /** Exact reply text. */
  content?: string
  /** Reply text of exactly this many bytes (ASCII filler); wins over `content`. */
  content_bytes?: number
  /** Shallow-merged into `usage` / `usageMetadata` (nothing is recomputed); Anthropic: cache counts such as `cache_read_input_tokens` too. */
  usage?: Record<string, unknown>
  /** Never answer: the request stays open until the client leaves or the server closes. */
  hang?: boolean
  /** Destroy the socket without answering (after `delay_ms`, if any). */
  destroy?: boolean
  /**
   * Answer 200 with `content-encoding: gzip` and a body that decodes to this many zero bytes (rounded up to 16 MiB):
   * a gzip bomb, a few KiB per 16 MiB, generated as it is sent.
   */
  gzip_bomb_bytes?: number
  /** Streams only: destroy the socket right after this many frames were flushed. */
  destroy_after_frames?: number
  /** The arguments of the tool call the model makes (default: built from the function's parameter schema). */
  tool_arguments?: Record<string, unknown>
  /**
   * The declared tool the model calls when the user spoke last (default: the one `tool_choice` names, else the first
   * declared): agents declare many tools, and a test of one of them names it.
   */
  tool_name?: string
  /**
   * Azure paths only: `'prompt'` answers Azure's 400 `content_filter` error (with `innererror.content_filter_result`),
   * `'completion'` a chat completion cut with `finish_reason: content_filter`.
   */
  content_filter?: 'prompt' | 'completion'
  /** Gemini: the `thoughtSignature` of the function call part, as thinking models send it; Anthropic: the thinking block's `signature`. */
  thought_signature?: string
  /** Bedrock: the error type (`x-amzn-errortype`) of `status` (default: the one Bedrock sends with that status). */
  error_type?: string
  /** Bedrock streams: after two frames, an exception of this type (`throttlingException`) ends the stream. */
  stream_exception?: string
  /** Bedrock streams: the second frame's message CRC is wrong. */
  corrupt_frame?: boolean
  /** Bedrock streams: after the first frame, a frame announcing this many bytes (and sending them). */
  oversized_frame_bytes?: number
}

/** A running mock upstream. */
export interface MockUpstream {
  /** Base URL, e.g. `http://127.0.0.1:PORT` (no trailing slash). */
  url: string
  /** The port actually listened on. */
  port: number
  /** The underlying server. */
  server: Server
  /** Vertex AI: the token endpoint, its service accounts and counts. */
  vertex: VertexMock
  /** Every request received (when recording is on), oldest first. */
  requests: RecordedRequest[]
  /** Streaming requests whose client went away before the stream ended. */
  abortedStreams: number
  /** Requests whose response was fully written. */
  completedCalls: number
  /** Non-streaming requests whose client went away before their answer was written. */
  abortedCalls: number
  /** Empty `requests` (in place). */
  resetRequests(): void
  /** Answer bodies containing `marker` as if they carried `mock: controls` (their own win); `undefined` removes it. */
  steer(marker: string, controls: MockControls | undefined): void
  /** Poll `predicate` until it returns true; rejects after `timeoutMs` (default 5000). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>
  /** Stop listening and destroy every open socket. */
  close(): Promise<void>
}
