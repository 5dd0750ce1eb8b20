// The mock upstream's server: it routes (model calls by the registry's route patterns, routes.ts, each answered as
// operations.ts says), authenticates, records and applies the per-request controls (the `mock` body field, see
// MockControls); the wire formats live in openai.ts, responses.ts, gemini.ts, gemini-methods.ts,
// anthropic.ts and anthropic-messages.ts beside it, Bedrock's in bedrock*.ts (which alone use the @smithy packages,
// for SigV4 and event streams). Node built-ins otherwise; no logging on the hot path.

import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { isObject } from '../json/value.js'
import {
  answerModels as answerAnthropicModels,
  anthropicHeaders,
  isModelsPath,
  keyProblem,
  sendAnthropicError,
  versionProblem,
} from './anthropic.js'
import { type AzureRoute, answerContentFilter, azureRoute } from './azure.js'
import { answerBedrock, type BedrockContext } from './bedrock.js'
import { GEMINI_JSON_TYPE, GOOGLE_BAD_JSON, GOOGLE_BAD_KEY, GOOGLE_MISSING_KEY, sendGoogleError } from './gemini.js'
import { MODELS_BODY, OPENAI_AUTH_ERROR, OPENAI_BAD_JSON, sendOpenaiError } from './openai.js'
import { MOCK_OPERATIONS, type MockFamily } from './operations.js'
import { after, type State, send, sendGzipBomb } from './respond.js'
import { mockCall } from './routes.js'
import { JSON_TYPE, type JsonObject, num } from './shared.js'
import type { MockControls, MockUpstream, MockUpstreamOptions, RecordedRequest } from './types.js'
import { createVertexMock } from './vertex.js'

function noop() {}

/** The parsed body, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Start the mock upstream; resolves once it listens. */
export function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const { port = 0, host = '127.0.0.1', delayMs = 0, apiKey, record = true } = options
  const defaultDelay = num(delayMs) ?? 0
  const bearer = apiKey === undefined ? undefined : `Bearer ${apiKey}`
  let counter = 0
  const nextSeq = () => ++counter
  // Request ids are counted apart, so that the ids of answers do not depend on how many errors came before.
  let requests = 0
  const sockets = new Set<Socket>()
  const steering = new Map<string, MockControls>()
  const vertex = createVertexMock(options.vertex ?? {}, () => mock.url)
  const bedrockContext: BedrockContext = {
    options,
    nextSeq,
    controls(text, body) {
      let ctl: JsonObject = isObject(body.mock) ? body.mock : {}
      for (const [marker, controls] of steering) if (text.includes(marker)) ctl = { ...controls, ...ctl }
      return ctl
    },
  }

  function handle(req: IncomingMessage, res: ServerResponse, buf: Buffer): void {
    const method = req.method ?? 'GET'
    const target = req.url ?? '/'
    let text = buf.length === 0 ? '' : buf.toString('utf8')
    const recorded: RecordedRequest | undefined = record
      ? { method, path: target, headers: req.headers, body: text, response: '' }
      : undefined
    if (recorded) mock.requests.push(recorded)

    const st: State = { timer: null, closed: false, stream: false, selfDestroyed: false, headers: undefined, recorded }
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
    let pathname = q === -1 ? target : target.slice(0, q)
    let query = q === -1 ? '' : target.slice(q + 1)
    // Vertex AI's paths (and its token endpoint) check their token, then are answered as the Gemini or Anthropic call.
    const routed = vertex.route(req, res, st, method, pathname, query, text)
    if (routed === null) return
    if (routed !== undefined) ({ pathname, query, text } = routed)
    const authed = routed !== undefined
    // Azure OpenAI's paths: checked in azure.ts (its key or token, its api-version), then answered as OpenAI's.
    let azure: Exclude<AzureRoute, { status: number }> | undefined
    if (pathname.startsWith('/openai/')) {
      const route = azureRoute(method, pathname, query, req.headers, apiKey, options.azure)
      if ('status' in route) {
        send(res, st, route.status, JSON_TYPE, route.body)
        return
      }
      azure = route
      pathname = route.path
    }

    // Model calls by the registry's route patterns (routes.ts); what no client route names is explicit here.
    const call = mockCall(method, pathname)
    if (call?.answer.family === 'bedrock') {
      answerBedrock(
        { model: decodeURIComponent(call.params.model ?? ''), api: call.verb },
        { method, target, headers: req.headers, body: buf },
        res,
        st,
        bedrockContext,
      )
      return
    }
    const answer = call?.answer
    // Every Anthropic client names the API version it speaks: its model list and its errors are Anthropic's.
    const version = req.headers['anthropic-version']
    const anthropicModels = version !== undefined && method === 'GET' && isModelsPath(pathname)
    let family: MockFamily
    if (answer !== undefined) family = answer.family
    else if (anthropicModels) family = 'anthropic'
    else if (pathname === '/v1/models' && method === 'GET') {
      if (bearer !== undefined && req.headers.authorization !== bearer) {
        send(res, st, 401, JSON_TYPE, OPENAI_AUTH_ERROR)
        return
      }
      send(res, st, 200, JSON_TYPE, MODELS_BODY)
      return
    } else {
      if (version !== undefined) {
        st.headers = anthropicHeaders(`req_mock_${++requests}`)
        sendAnthropicError(res, st, 404, `Route ${method} ${pathname} not found.`)
      } else if (pathname.startsWith('/v1beta/')) {
        sendGoogleError(res, st, 404, `Route ${method} ${pathname} not found.`)
      } else {
        sendOpenaiError(res, st, 404, `Unknown request URL: ${method} ${pathname}.`, 'unknown_url')
      }
      return
    }
    if (family === 'anthropic') st.headers = anthropicHeaders(`req_mock_${++requests}`)

    const params = query === '' ? null : new URLSearchParams(query)

    // Authentication (before the body is looked at, like the real APIs), then Anthropic's version header.
    if (family === 'anthropic') {
      const problem = apiKey === undefined || authed ? undefined : keyProblem(req.headers, apiKey)
      const unversioned = versionProblem(req.headers)
      if (problem !== undefined) sendAnthropicError(res, st, 401, problem)
      else if (unversioned !== undefined) sendAnthropicError(res, st, 400, unversioned)
      else if (anthropicModels) answerAnthropicModels(pathname, params, res, st)
      if (problem !== undefined || unversioned !== undefined || anthropicModels) return
    } else if (apiKey !== undefined && !authed && azure === undefined) {
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

    const body = parseJson(text)
    if (!isObject(body)) {
      if (family === 'anthropic')
        sendAnthropicError(res, st, 400, 'There was an error parsing the body of your request: it is not a JSON object.')
      else if (family === 'openai') send(res, st, 400, JSON_TYPE, OPENAI_BAD_JSON)
      else send(res, st, 400, GEMINI_JSON_TYPE, GOOGLE_BAD_JSON)
      return
    }

    // The deployments API names the model in its path alone.
    if (azure?.deployment !== undefined) body.model ??= azure.deployment
    let ctl: JsonObject = isObject(body.mock) ? body.mock : {}
    for (const [marker, controls] of steering) if (text.includes(marker)) ctl = { ...controls, ...ctl }
    if (isObject(ctl.headers)) st.headers = { ...st.headers, ...ctl.headers }
    st.stream = call !== undefined && answer?.streams?.(body, call) === true

    if (ctl.hang === true) return // never answer

    after(st, num(ctl.delay_ms) ?? defaultDelay, () => {
      if (ctl.destroy === true) {
        st.selfDestroyed = true
        req.socket.destroy()
        return
      }
      if (azure !== undefined && answerContentFilter(body, ctl, res, st, nextSeq, answer === MOCK_OPERATIONS['chat.completions'])) return
      const bomb = num(ctl.gzip_bomb_bytes)
      if (bomb !== undefined) return sendGzipBomb(res, st, bomb)
      const status = num(ctl.status)
      if (status !== undefined) {
        const eb = ctl.error_body
        if (eb !== undefined) {
          const isStr = typeof eb === 'string'
          send(res, st, status, isStr ? 'text/plain; charset=utf-8' : JSON_TYPE, isStr ? eb : JSON.stringify(eb))
        } else if (family === 'anthropic') {
          sendAnthropicError(res, st, status, `Mock upstream error (status ${status}).`)
        } else if (family === 'openai') {
          sendOpenaiError(res, st, status, `Mock upstream error (status ${status}).`)
        } else {
          sendGoogleError(res, st, status, `Mock upstream error (status ${status}).`)
        }
        return
      }
      if (call !== undefined) answer?.answer({ call, pathname, body, ctl, params, version, res, st, nextSeq })
    })
  }

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      chunks.push(c)
      size += c.length
    })
    req.on('end', () => {
      const [only] = chunks
      handle(req, res, chunks.length === 1 && only !== undefined ? only : Buffer.concat(chunks, size))
    })
    req.on('error', noop)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  server.on('clientError', (_err, socket) => socket.destroy())

  const mock: MockUpstream = {
    url: '',
    vertex,
    port: 0,
    server,
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
          let ok: boolean
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

  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const addr = server.address() as AddressInfo
      mock.port = addr.port
      const h = host.includes(':') ? `[${host}]` : host
      mock.url = `http://${h}:${addr.port}`
      resolve(mock)
    })
  })
}
