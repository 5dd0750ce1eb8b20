import { Agent, type Dispatcher } from 'undici'
import { GatewayError } from './errors.js'
import type { ResolvedModel } from './options.js'
import type { Endpoint } from './types.js'

/** An upstream response whose body has not been read yet. */
export type UpstreamResponse = Dispatcher.ResponseData

/** One keep-alive connection pool per gateway; timeouts come from the gateway's options, not undici's 300 s. */
export function createUpstreamAgent(upstreamMs: number, connectMs: number): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 10 * 60_000,
    headersTimeout: upstreamMs,
    bodyTimeout: upstreamMs,
    connect: { timeout: connectMs },
  })
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/** Maps a failed upstream call to a 502 or 504 that names neither the upstream URL nor its key. */
export function upstreamFailure(error: unknown): GatewayError {
  const code = (error as { code?: unknown } | null)?.code
  const name = (error as { name?: unknown } | null)?.name
  if ((typeof code === 'string' && TIMEOUT_CODES.has(code)) || name === 'TimeoutError') {
    return new GatewayError('upstream_timeout', 'The upstream model did not answer in time.', { cause: error })
  }
  return new GatewayError('upstream_unreachable', 'The upstream model could not be reached.', { cause: error })
}

/** Path of the upstream call for a model and endpoint. */
function upstreamPath(model: ResolvedModel, endpoint: Endpoint, stream: boolean): string {
  const { basePath } = model.upstream
  if (endpoint === 'chat.completions') return `${basePath}/chat/completions`
  const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent'
  return `${basePath}/v1beta/models/${encodeURIComponent(model.upstreamModel)}:${method}`
}

/** Headers of the upstream call: the gateway's own credentials, never the client's. */
function upstreamHeaders(model: ResolvedModel, length: number, stream: boolean): Record<string, string> {
  const { upstream } = model
  const headers: Record<string, string> = {
    ...upstream.headers,
    'content-type': 'application/json',
    'content-length': String(length),
    accept: stream ? 'text/event-stream' : 'application/json',
  }
  if (upstream.apiKey !== undefined) {
    if (upstream.type === 'gemini') headers['x-goog-api-key'] = upstream.apiKey
    else headers.authorization = `Bearer ${upstream.apiKey}`
  }
  return headers
}

/** Sends one request upstream; rejects with a 502/504 GatewayError when no response arrives. */
export async function callUpstream(
  agent: Agent,
  model: ResolvedModel,
  endpoint: Endpoint,
  stream: boolean,
  body: Buffer,
  signal: AbortSignal | undefined,
): Promise<UpstreamResponse> {
  try {
    return await agent.request({
      origin: model.upstream.origin,
      path: upstreamPath(model, endpoint, stream),
      method: 'POST',
      headers: upstreamHeaders(model, body.length, stream),
      body,
      signal,
    })
  } catch (error) {
    throw upstreamFailure(error)
  }
}

/** Reads a whole upstream body; rejects with a 502/504 GatewayError when it breaks off. */
export function readUpstreamBody(response: UpstreamResponse): Promise<Buffer> {
  // Plain events, not `for await`: the async iterator costs measurable time per request at saturation.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const { body } = response
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
    })
    body.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)))
    body.once('error', (error) => reject(upstreamFailure(error)))
  })
}

/** Replaces the top-level string value of `key` in a JSON object text, keeping every other byte as sent. */
export function replaceTopLevelString(text: string, key: string, value: string): string {
  let depth = 0
  let i = 0
  let expectKey = false
  const n = text.length
  while (i < n) {
    const c = text[i]
    if (c === '"') {
      const start = i
      i++
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
      i++
      if (depth === 1 && expectKey) {
        expectKey = false
        if (JSON.parse(text.slice(start, i)) === key) {
          let j = i
          while (j < n && text[j] !== ':') j++
          j++
          while (j < n && /\s/.test(text[j] as string)) j++
          if (text[j] === '"') {
            let end = j + 1
            while (end < n && text[end] !== '"') end += text[end] === '\\' ? 2 : 1
            return text.slice(0, j) + JSON.stringify(value) + text.slice(end + 1)
          }
          i = j
        }
      }
      continue
    }
    if (c === '{') {
      depth++
      if (depth === 1) expectKey = true
    } else if (c === '[') {
      depth++
    } else if (c === '}' || c === ']') {
      depth--
    } else if (c === ',' && depth === 1) {
      expectKey = true
    }
    i++
  }
  return text
}
