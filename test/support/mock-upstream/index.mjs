// Deterministic fake of the OpenAI chat-completions, Responses and embeddings APIs and the
// Gemini generate-content, embedding and token-counting API. Used by the example servers, the end-to-end tests and
// the benchmarks. Node built-ins only; no logging on the hot path.
// examples/mock-upstream.mjs runs it on its own, for trying the examples.
//
// Per-request behaviour is driven by an optional top-level body field `mock`
// (see MockControls below). This module routes, authenticates and applies the
// controls; the wire formats live in openai.mjs, responses.mjs, gemini.mjs and
// gemini-methods.mjs beside it.

import http from 'node:http'
import {
  answerGenerate,
  GEMINI_JSON_TYPE,
  GEMINI_PATH,
  GOOGLE_BAD_JSON,
  GOOGLE_BAD_KEY,
  GOOGLE_MISSING_KEY,
  sendGoogleError,
} from './gemini.mjs'
import { answerCountTokens, answerEmbed } from './gemini-methods.mjs'
import { answerChat, answerEmbeddings, MODELS_BODY, OPENAI_AUTH_ERROR, OPENAI_BAD_JSON, sendOpenaiError } from './openai.mjs'
import { after, send } from './respond.mjs'
import { answerResponses } from './responses.mjs'
import { isObject, JSON_TYPE, num } from './shared.mjs'

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
 * @property {string} response The body the mock answered with, as written so far (stream frames included).
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
 * @property {Record<string, unknown>} [tool_arguments] The arguments of the tool call the model makes (default: built
 *   from the function's parameter schema).
 * @property {string} [thought_signature] Gemini only: the `thoughtSignature` of the function call part, as thinking
 *   models send it.
 */

/**
 * @typedef {object} MockUpstream
 * @property {string} url Base URL, e.g. `http://127.0.0.1:PORT` (no trailing slash).
 * @property {number} port The port actually listened on.
 * @property {import('node:http').Server} server The underlying server.
 * @property {RecordedRequest[]} requests Every request received (when recording is on), oldest first.
 * @property {number} abortedStreams Streaming requests whose client went away before the stream ended.
 * @property {number} completedCalls Requests whose response was fully written.
 * @property {number} abortedCalls Non-streaming requests whose client went away before their answer was written.
 * @property {() => void} resetRequests Empty `requests` (in place).
 * @property {(marker: string, controls: MockControls | undefined) => void} steer Answer every request whose body
 *   contains `marker` as if it carried `mock: controls` (its own `mock` fields win); `undefined` removes the marker.
 *   For bodies that cannot carry a `mock` field, such as the ones a gateway translates from another format.
 * @property {(predicate: () => boolean, timeoutMs?: number) => Promise<void>} waitFor
 *   Poll `predicate` until it returns true; rejects after `timeoutMs` (default 5000).
 * @property {() => Promise<void>} close Stop listening and destroy every open socket.
 */

function noop() {}

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
  const nextSeq = () => ++counter
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set()
  /** @type {Map<string, MockControls>} */
  const steering = new Map()

  /** @type {MockUpstream} */
  const mock = {
    url: '',
    port: 0,
    server: /** @type {any} */ (null),
    requests: [],
    abortedStreams: 0,
    completedCalls: 0,
    abortedCalls: 0,
    resetRequests() {
      mock.requests.length = 0
    },
    steer(marker, controls) {
      if (controls === undefined) steering.delete(marker)
      else steering.set(marker, controls)
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

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res @param {Buffer} buf */
  function handle(req, res, buf) {
    const method = req.method ?? 'GET'
    const target = req.url ?? '/'
    const text = buf.length === 0 ? '' : buf.toString('utf8')
    /** @type {RecordedRequest | undefined} */
    const recorded = record ? { method, path: target, headers: req.headers, body: text, response: '' } : undefined
    if (recorded) mock.requests.push(recorded)

    /** @type {import('./respond.mjs').State} */
    const st = { timer: null, closed: false, stream: false, selfDestroyed: false, headers: undefined, recorded }
    res.on('error', noop)
    res.on('close', () => {
      st.closed = true
      if (st.timer) {
        clearTimeout(st.timer)
        st.timer = null
      }
      if (res.writableFinished) mock.completedCalls++
      else if (st.stream && !st.selfDestroyed) mock.abortedStreams++
      else if (!st.stream && !st.selfDestroyed) mock.abortedCalls++
    })

    const q = target.indexOf('?')
    const pathname = q === -1 ? target : target.slice(0, q)
    const query = q === -1 ? '' : target.slice(q + 1)

    /** @type {'openai' | 'gemini'} */
    let family
    /** @type {RegExpExecArray | null} */
    const gm = method === 'POST' ? GEMINI_PATH.exec(pathname) : null
    const embeddings = pathname === '/v1/embeddings' && method === 'POST'
    const responsesApi = pathname === '/v1/responses' && method === 'POST'
    if ((pathname === '/v1/chat/completions' && method === 'POST') || embeddings || responsesApi) family = 'openai'
    else if (pathname === '/v1/models' && method === 'GET') {
      if (bearer !== undefined && req.headers.authorization !== bearer) {
        send(res, st, 401, JSON_TYPE, OPENAI_AUTH_ERROR)
        return
      }
      send(res, st, 200, JSON_TYPE, MODELS_BODY)
      return
    } else if (gm !== null) family = 'gemini'
    else {
      if (pathname.startsWith('/v1beta/')) {
        sendGoogleError(res, st, 404, `Route ${method} ${pathname} not found.`)
      } else {
        sendOpenaiError(res, st, 404, `Unknown request URL: ${method} ${pathname}.`, 'unknown_url')
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
      if (family === 'openai') send(res, st, 400, JSON_TYPE, OPENAI_BAD_JSON)
      else send(res, st, 400, GEMINI_JSON_TYPE, GOOGLE_BAD_JSON)
      return
    }

    /** @type {Record<string, any>} */
    let ctl = isObject(body.mock) ? body.mock : {}
    for (const [marker, controls] of steering) if (text.includes(marker)) ctl = { ...controls, ...ctl }
    if (isObject(ctl.headers)) st.headers = ctl.headers
    st.stream = family === 'openai' ? body.stream === true && !embeddings : gm?.[2] === 'streamGenerateContent'

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
          sendOpenaiError(res, st, status, `Mock upstream error (status ${status}).`)
        } else {
          sendGoogleError(res, st, status, `Mock upstream error (status ${status}).`)
        }
        return
      }
      const route = /** @type {RegExpExecArray} */ (gm)
      if (embeddings) answerEmbeddings(body, ctl, res, st)
      else if (responsesApi) answerResponses(body, ctl, res, st, nextSeq)
      else if (family === 'openai') answerChat(body, ctl, res, st, nextSeq)
      else if (route[2] === 'embedContent' || route[2] === 'batchEmbedContents') answerEmbed(route, body, res, st)
      else if (route[2] === 'countTokens') answerCountTokens(route, body, res, st)
      else answerGenerate(route, params, body, ctl, res, st, nextSeq)
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
