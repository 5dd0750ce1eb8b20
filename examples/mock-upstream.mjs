// Deterministic fake of the OpenAI chat-completions API and the Gemini
// generate-content API. Used by the example server, the end-to-end tests and
// the benchmarks. Node built-ins only; no logging on the hot path.
//
//   node examples/mock-upstream.mjs        # listens on MOCK_PORT (default 8787)
//
// Per-request behaviour is driven by an optional top-level body field `mock`
// (see MockControls below).

import http from 'node:http'
import { pathToFileURL } from 'node:url'

/**
 * @typedef {object} MockUpstreamOptions
 * @property {number} [port=0] Port to listen on (0 = a free port).
 * @property {string} [host='127.0.0.1'] Interface to listen on.
 * @property {number} [delayMs=0] Default delay before response headers (before the first frame for streams).
 * @property {string} [apiKey] When set, requests must carry this key (OpenAI: `Authorization: Bearer <key>`;
 *   Gemini: `x-goog-api-key: <key>` or `?key=<key>`), otherwise they are rejected like the real APIs.
 * @property {boolean} [record=true] Record every request in `requests` (turn off for benchmarks).
 */

/**
 * @typedef {object} RecordedRequest
 * @property {string} method
 * @property {string} path The request target as received, including the query string.
 * @property {import('node:http').IncomingHttpHeaders} headers Lower-cased header names.
 * @property {string} body The body decoded as UTF-8 ('' when empty).
 */

/**
 * Controls accepted in the optional top-level body field `mock`.
 * @typedef {object} MockControls
 * @property {number} [delay_ms] Wait before sending headers (streams: before the first frame). Default: server `delayMs`.
 * @property {number} [status] Answer with this status and `error_body` (default: an error in the route's family shape).
 * @property {unknown} [error_body] Body for `status`: an object/array is sent as JSON, a string as is.
 * @property {Record<string, string>} [headers] Extra response headers (e.g. `retry-after`).
 * @property {number} [chunks=5] Number of content deltas in a stream.
 * @property {number} [chunk_delay_ms=0] Delay between stream frames.
 * @property {string} [content] Exact reply text.
 * @property {number} [content_bytes] Reply text of exactly this many bytes (ASCII filler).
 * @property {Record<string, unknown>} [usage] Shallow-merged into `usage` / `usageMetadata` (nothing is recomputed).
 * @property {boolean} [hang] Never answer; the request stays open until the client leaves or the server closes.
 * @property {boolean} [destroy] Destroy the socket without answering (after `delay_ms`, if any).
 * @property {number} [destroy_after_frames] Streams only: destroy the socket right after this many frames were flushed.
 */

/**
 * @typedef {object} MockUpstream
 * @property {string} url Base URL, e.g. `http://127.0.0.1:PORT` (no trailing slash).
 * @property {number} port The port actually listened on.
 * @property {import('node:http').Server} server The underlying server.
 * @property {RecordedRequest[]} requests Every request received (when recording is on), oldest first.
 * @property {number} abortedStreams Streaming requests whose client went away before the stream ended.
 * @property {number} completedCalls Requests whose response was fully written.
 * @property {() => void} resetRequests Empty `requests` (in place).
 * @property {(predicate: () => boolean, timeoutMs?: number) => Promise<void>} waitFor
 *   Poll `predicate` until it returns true; rejects after `timeoutMs` (default 5000).
 * @property {() => Promise<void>} close Stop listening and destroy every open socket.
 */

const JSON_TYPE = 'application/json'
const SSE_TYPE_OPENAI = 'text/event-stream; charset=utf-8'
const SSE_TYPE_GEMINI = 'text/event-stream'
const GEMINI_JSON_TYPE = 'application/json; charset=UTF-8'
const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/
const FILLER = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '
const MAX_CHUNKS = 100_000

const MODELS_BODY = JSON.stringify({
  object: 'list',
  data: [
    { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
    { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
    { id: 'gpt-4.1-mini', object: 'model', created: 1744318173, owned_by: 'system' },
  ],
})

const GOOGLE_STATUS = /** @type {Record<number, string>} */ ({
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
})

/** @param {number} status */
function openaiErrorType(status) {
  if (status === 401) return 'invalid_request_error'
  if (status === 429) return 'rate_limit_exceeded'
  if (status >= 500) return 'server_error'
  return 'invalid_request_error'
}

/** @param {number} status @param {string} message @param {string | null} [code] */
function openaiError(status, message, code = null) {
  return { error: { message, type: openaiErrorType(status), param: null, code } }
}

/** @param {number} status @param {string} message */
function googleError(status, message) {
  return { error: { code: status, message, status: GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } }
}

const OPENAI_AUTH_ERROR = JSON.stringify({
  error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
})
const GOOGLE_MISSING_KEY = JSON.stringify(
  googleError(
    401,
    'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  ),
)
const GOOGLE_BAD_KEY = JSON.stringify({
  error: {
    code: 400,
    message: 'API key not valid. Please pass a valid API key.',
    status: 'INVALID_ARGUMENT',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ],
  },
})

function noop() {}

/** @param {unknown} v @returns {v is Record<string, any>} */
function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Non-negative finite number or undefined. @param {unknown} v */
function num(v) {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined
}

/** Deterministic token estimate: one token per 4 UTF-16 code units. @param {number} len */
function tokens(len) {
  return Math.ceil(len / 4)
}

/** Text of an OpenAI message content (string or array of parts). @param {unknown} content */
function openaiText(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let s = ''
  for (const p of content) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/** Text of a Gemini content object's parts. @param {unknown} content */
function geminiText(content) {
  if (!isObject(content) || !Array.isArray(content.parts)) return ''
  let s = ''
  for (const p of content.parts) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/** @param {number} n */
function fillerText(n) {
  return n <= FILLER.length ? FILLER.slice(0, n) : FILLER.repeat(Math.ceil(n / FILLER.length)).slice(0, n)
}

/** Reply text: mock.content_bytes > mock.content > `Echo: <last user text>`. */
function replyText(/** @type {Record<string, any>} */ ctl, /** @type {string} */ lastUser) {
  const bytes = num(ctl.content_bytes)
  if (bytes !== undefined) return fillerText(Math.floor(bytes))
  if (typeof ctl.content === 'string') return ctl.content
  return `Echo: ${lastUser}`
}

/** Split `text` into exactly `n` pieces (never inside a surrogate pair). @param {string} text @param {number} n */
function splitText(text, n) {
  if (n <= 0) return []
  if (n === 1) return [text]
  const out = []
  const len = text.length
  let start = 0
  for (let i = 1; i <= n; i++) {
    let end = i === n ? len : Math.floor((len * i) / n)
    if (end < start) end = start
    if (end > 0 && end < len) {
      const c = text.charCodeAt(end - 1)
      if (c >= 0xd800 && c <= 0xdbff) end++
    }
    out.push(text.slice(start, end))
    start = end
  }
  return out
}

/**
 * Start the mock upstream.
 * @param {MockUpstreamOptions} [options]
 * @returns {Promise<MockUpstream>}
 */
export function startMockUpstream(options = {}) {
  const { port = 0, host = '127.0.0.1', delayMs = 0, apiKey, record = true } = options
  const defaultDelay = num(delayMs) ?? 0
  const bearer = apiKey === undefined ? undefined : `Bearer ${apiKey}`
  let counter = 0
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set()

  /** @type {MockUpstream} */
  const mock = {
    url: '',
    port: 0,
    server: /** @type {any} */ (null),
    requests: [],
    abortedStreams: 0,
    completedCalls: 0,
    resetRequests() {
      mock.requests.length = 0
    },
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs
        const tick = () => {
          let ok
          try {
            ok = predicate()
          } catch (err) {
            reject(err)
            return
          }
          if (ok) resolve()
          else if (Date.now() >= deadline) reject(new Error(`waitFor: condition not met within ${timeoutMs} ms`))
          else setTimeout(tick, 5)
        }
        tick()
      })
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve())
        for (const s of sockets) s.destroy()
        sockets.clear()
      })
    },
  }

  /**
   * Per-request state.
   * @typedef {{ timer: NodeJS.Timeout | null, closed: boolean, stream: boolean, selfDestroyed: boolean, headers: Record<string, string> | undefined }} State
   */

  /** @param {import('node:http').ServerResponse} res @param {State} st @param {number} status @param {string} type @param {string} body */
  function send(res, st, status, type, body) {
    /** @type {Record<string, string | number>} */
    const h = { 'content-type': type, 'content-length': Buffer.byteLength(body) }
    if (st.headers) Object.assign(h, st.headers)
    res.writeHead(status, h)
    res.end(body)
  }

  /** Run `fn` after `ms` (synchronously when 0), cancelled if the client goes away. @param {State} st @param {number} ms @param {() => void} fn */
  function after(st, ms, fn) {
    if (ms > 0) {
      st.timer = setTimeout(() => {
        st.timer = null
        if (!st.closed) fn()
      }, ms)
    } else fn()
  }

  /**
   * Write `frames` one by one (honouring backpressure and `frameDelay`), then end.
   * @param {import('node:http').ServerResponse} res @param {State} st @param {string[]} frames
   * @param {number} frameDelay @param {number | undefined} destroyAfter
   */
  function pump(res, st, frames, frameDelay, destroyAfter) {
    let i = 0
    const step = () => {
      st.timer = null
      while (i < frames.length) {
        if (st.closed) return
        const frame = /** @type {string} */ (frames[i++])
        if (destroyAfter !== undefined && i >= destroyAfter) {
          st.selfDestroyed = true
          res.write(frame, () => res.socket?.destroy())
          return
        }
        const ok = res.write(frame)
        if (i === frames.length) break
        if (frameDelay > 0) {
          st.timer = setTimeout(step, frameDelay)
          return
        }
        if (!ok) {
          res.once('drain', step)
          return
        }
      }
      if (!st.closed) res.end()
    }
    step()
  }

  /** @param {import('node:http').ServerResponse} res @param {State} st @param {string} type @param {string[]} frames @param {Record<string, any>} ctl */
  function stream(res, st, type, frames, ctl) {
    /** @type {Record<string, string>} */
    const h = { 'content-type': type, 'cache-control': 'no-cache' }
    if (st.headers) Object.assign(h, st.headers)
    res.writeHead(200, h)
    const da = num(ctl.destroy_after_frames)
    pump(res, st, frames, num(ctl.chunk_delay_ms) ?? 0, da === undefined ? undefined : Math.max(1, Math.floor(da)))
  }

  /** @param {Record<string, any>} ctl */
  function chunkCount(ctl) {
    const c = num(ctl.chunks)
    return c === undefined ? 5 : Math.min(MAX_CHUNKS, Math.floor(c))
  }

  /** @param {Record<string, any>} body @param {Record<string, any>} ctl @param {import('node:http').ServerResponse} res @param {State} st */
  function openaiCompletion(body, ctl, res, st) {
    const id = `chatcmpl-mock-${++counter}`
    const created = Math.floor(Date.now() / 1000)
    const model = body.model
    const n = Math.max(1, Math.min(128, Math.floor(num(body.n) ?? 1)))
    let promptLen = 0
    let lastUser = ''
    for (const m of body.messages) {
      if (!isObject(m)) continue
      const t = openaiText(m.content)
      promptLen += t.length
      if (m.role === 'user') lastUser = t
    }
    const content = replyText(ctl, lastUser)
    const prompt = tokens(promptLen)
    const completion = tokens(content.length) * n
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    }
    if (isObject(ctl.usage)) Object.assign(usage, ctl.usage)

    if (body.stream !== true) {
      const choices = []
      for (let i = 0; i < n; i++) {
        choices.push({
          index: i,
          message: { role: 'assistant', content, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        })
      }
      const out = {
        id,
        object: 'chat.completion',
        created,
        model,
        choices,
        usage,
        service_tier: 'default',
        system_fingerprint: null,
      }
      send(res, st, 200, JSON_TYPE, JSON.stringify(out))
      return
    }

    const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true
    /** @param {unknown[]} choices @param {unknown} [u] */
    const frame = (choices, u) => {
      /** @type {Record<string, unknown>} */
      const c = {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        service_tier: 'default',
        system_fingerprint: null,
        choices,
      }
      if (includeUsage) c.usage = u ?? null
      return `data: ${JSON.stringify(c)}\n\n`
    }
    const pieces = splitText(content, chunkCount(ctl))
    const frames = []
    for (let i = 0; i < n; i++) {
      frames.push(
        frame([
          { index: i, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
        ]),
      )
    }
    for (const p of pieces) {
      for (let i = 0; i < n; i++) {
        frames.push(frame([{ index: i, delta: { content: p }, logprobs: null, finish_reason: null }]))
      }
    }
    for (let i = 0; i < n; i++) {
      frames.push(frame([{ index: i, delta: {}, logprobs: null, finish_reason: 'stop' }]))
    }
    if (includeUsage) frames.push(frame([], usage))
    frames.push('data: [DONE]\n\n')
    stream(res, st, SSE_TYPE_OPENAI, frames, ctl)
  }

  /**
   * @param {string} model @param {'generateContent' | 'streamGenerateContent'} method @param {boolean} sse
   * @param {Record<string, any>} body @param {Record<string, any>} ctl
   * @param {import('node:http').ServerResponse} res @param {State} st
   */
  function geminiGenerate(model, method, sse, body, ctl, res, st) {
    const responseId = `mock-resp-${++counter}`
    let promptLen = geminiText(body.systemInstruction).length
    let lastUser = ''
    for (const c of body.contents) {
      const t = geminiText(c)
      promptLen += t.length
      if (isObject(c) && (c.role === undefined || c.role === 'user')) lastUser = t
    }
    const text = replyText(ctl, lastUser)
    const prompt = tokens(promptLen)
    const candidates = tokens(text.length)
    const usageMetadata = {
      promptTokenCount: prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: prompt + candidates,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    }
    if (isObject(ctl.usage)) Object.assign(usageMetadata, ctl.usage)

    if (method === 'generateContent') {
      const out = {
        candidates: [{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
        modelVersion: model,
        responseId,
      }
      send(res, st, 200, JSON_TYPE, JSON.stringify(out))
      return
    }

    const pieces = splitText(text, Math.max(1, chunkCount(ctl)))
    const last = pieces.length - 1
    const frames = pieces.map((piece, i) => {
      /** @type {Record<string, unknown>} */
      const cand = { content: { parts: [{ text: piece }], role: 'model' }, index: 0 }
      /** @type {Record<string, unknown>} */
      const obj = { candidates: [cand] }
      if (i === last) {
        cand.finishReason = 'STOP'
        obj.usageMetadata = usageMetadata
      }
      obj.modelVersion = model
      obj.responseId = responseId
      const json = JSON.stringify(obj)
      if (sse) return `data: ${json}\r\n\r\n`
      // JSON array streamed progressively, as Google does without alt=sse.
      return (i === 0 ? '[' : ',\r\n') + json + (i === last ? ']' : '')
    })
    stream(res, st, sse ? SSE_TYPE_GEMINI : GEMINI_JSON_TYPE, frames, ctl)
  }

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res @param {Buffer} buf */
  function handle(req, res, buf) {
    const method = req.method ?? 'GET'
    const target = req.url ?? '/'
    const text = buf.length === 0 ? '' : buf.toString('utf8')
    if (record) mock.requests.push({ method, path: target, headers: req.headers, body: text })

    /** @type {State} */
    const st = { timer: null, closed: false, stream: false, selfDestroyed: false, headers: undefined }
    res.on('error', noop)
    res.on('close', () => {
      st.closed = true
      if (st.timer) {
        clearTimeout(st.timer)
        st.timer = null
      }
      if (res.writableFinished) mock.completedCalls++
      else if (st.stream && !st.selfDestroyed) mock.abortedStreams++
    })

    const q = target.indexOf('?')
    const pathname = q === -1 ? target : target.slice(0, q)
    const query = q === -1 ? '' : target.slice(q + 1)

    /** @type {'openai' | 'gemini'} */
    let family
    /** @type {RegExpExecArray | null} */
    let gm = null
    if (pathname === '/v1/chat/completions' && method === 'POST') family = 'openai'
    else if (pathname === '/v1/models' && method === 'GET') {
      if (bearer !== undefined && req.headers.authorization !== bearer) {
        send(res, st, 401, JSON_TYPE, OPENAI_AUTH_ERROR)
        return
      }
      send(res, st, 200, JSON_TYPE, MODELS_BODY)
      return
    } else if (method === 'POST' && (gm = GEMINI_PATH.exec(pathname)) !== null) family = 'gemini'
    else {
      if (pathname.startsWith('/v1beta/')) {
        send(res, st, 404, GEMINI_JSON_TYPE, JSON.stringify(googleError(404, `Route ${method} ${pathname} not found.`)))
      } else {
        send(res, st, 404, JSON_TYPE, JSON.stringify(openaiError(404, `Unknown request URL: ${method} ${pathname}.`, 'unknown_url')))
      }
      return
    }

    /** @type {URLSearchParams | null} */
    const params = query === '' ? null : new URLSearchParams(query)

    // Authentication (before the body is looked at, like the real APIs).
    if (apiKey !== undefined) {
      if (family === 'openai') {
        if (req.headers.authorization !== bearer) {
          send(res, st, 401, JSON_TYPE, OPENAI_AUTH_ERROR)
          return
        }
      } else {
        const h = req.headers['x-goog-api-key']
        const key = typeof h === 'string' ? h : (params?.get('key') ?? undefined)
        if (key === undefined || key === '') {
          send(res, st, 401, GEMINI_JSON_TYPE, GOOGLE_MISSING_KEY)
          return
        }
        if (key !== apiKey) {
          send(res, st, 400, GEMINI_JSON_TYPE, GOOGLE_BAD_KEY)
          return
        }
      }
    }

    /** @type {unknown} */
    let body
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    if (!isObject(body)) {
      if (family === 'openai') {
        send(
          res,
          st,
          400,
          JSON_TYPE,
          JSON.stringify(
            openaiError(
              400,
              "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
            ),
          ),
        )
      } else {
        send(res, st, 400, GEMINI_JSON_TYPE, JSON.stringify(googleError(400, 'Invalid JSON payload received.')))
      }
      return
    }

    /** @type {Record<string, any>} */
    const ctl = isObject(body.mock) ? body.mock : {}
    if (isObject(ctl.headers)) st.headers = ctl.headers
    const geminiMethod = /** @type {'generateContent' | 'streamGenerateContent'} */ (gm?.[2])
    st.stream = family === 'openai' ? body.stream === true : geminiMethod === 'streamGenerateContent'

    if (ctl.hang === true) return // never answer

    after(st, num(ctl.delay_ms) ?? defaultDelay, () => {
      if (ctl.destroy === true) {
        st.selfDestroyed = true
        req.socket.destroy()
        return
      }
      const status = num(ctl.status)
      if (status !== undefined) {
        const eb = ctl.error_body
        if (eb !== undefined) {
          const isStr = typeof eb === 'string'
          send(res, st, status, isStr ? 'text/plain; charset=utf-8' : JSON_TYPE, isStr ? eb : JSON.stringify(eb))
        } else if (family === 'openai') {
          send(res, st, status, JSON_TYPE, JSON.stringify(openaiError(status, `Mock upstream error (status ${status}).`)))
        } else {
          send(res, st, status, GEMINI_JSON_TYPE, JSON.stringify(googleError(status, `Mock upstream error (status ${status}).`)))
        }
        return
      }
      if (family === 'openai') {
        if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
          const msg = typeof body.model !== 'string' ? 'you must provide a model parameter' : "Missing required parameter: 'messages'."
          send(res, st, 400, JSON_TYPE, JSON.stringify(openaiError(400, msg)))
          return
        }
        openaiCompletion(body, ctl, res, st)
      } else {
        if (!Array.isArray(body.contents)) {
          send(res, st, 400, GEMINI_JSON_TYPE, JSON.stringify(googleError(400, '* GenerateContentRequest.contents: contents is not specified\n')))
          return
        }
        let model = /** @type {string} */ (gm?.[1])
        try {
          model = decodeURIComponent(model)
        } catch {}
        geminiGenerate(model, geminiMethod, params?.get('alt') === 'sse', body, ctl, res, st)
      }
    })
  }

  const server = http.createServer({ noDelay: true }, (req, res) => {
    /** @type {Buffer[]} */
    const chunks = []
    let size = 0
    req.on('data', (/** @type {Buffer} */ c) => {
      chunks.push(c)
      size += c.length
    })
    req.on('end', () => {
      handle(req, res, chunks.length === 1 ? /** @type {Buffer} */ (chunks[0]) : Buffer.concat(chunks, size))
    })
    req.on('error', noop)
  })
  mock.server = server
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  server.on('clientError', (_err, socket) => socket.destroy())

  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const addr = /** @type {import('node:net').AddressInfo} */ (server.address())
      mock.port = addr.port
      const h = host.includes(':') ? `[${host}]` : host
      mock.url = `http://${h}:${addr.port}`
      resolve(mock)
    })
  })
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.MOCK_PORT ?? 8787)
  const delay = Number(process.env.MOCK_DELAY_MS ?? 0)
  const mock = await startMockUpstream({
    port,
    host: process.env.MOCK_HOST ?? '127.0.0.1',
    delayMs: Number.isFinite(delay) ? delay : 0,
    apiKey: process.env.MOCK_API_KEY || undefined,
    record: false,
  })
  console.log(`mock upstream listening on ${mock.url}`)
  const stop = () => {
    mock.close().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
