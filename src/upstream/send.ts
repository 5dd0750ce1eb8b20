import type { IncomingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import { type Dispatcher, util } from 'undici'
import type { ByteBudget } from '../byte-budget.js'
import type { ResolvedModel, UpstreamKey } from '../config/resolve.js'
import { upstreamAccept } from '../dialects/framing/index.js'
import { isGatewayError } from '../errors.js'
import { joinedNow, joinInSlices } from '../http/join-chunks.js'
import type { Operation } from '../types.js'
import type { FramingReader } from './authorize.js'
import { decodedBody, decodedWhole } from './decode.js'
import { upstreamFailure, upstreamTooLarge } from './failure.js'

/** One upstream call, fully described: which model (hence upstream and dialect), what is asked, and the bytes. */
export interface UpstreamRequest {
  /** The gateway's request id, for logs and diagnostics. */
  requestId: string
  model: ResolvedModel
  /** The operation as the upstream is asked it: the client's own, or its dialect's `translatedOperation`. */
  operation: Operation
  stream: boolean
  /** 1 for the first attempt of a call; interceptors that try again count up. */
  attempt: number
  /** The exact bytes to send. */
  body: Buffer
  /** Lets the call be stopped: a stream whose client left, a call cancelled on purpose. */
  abortHook?: AbortHook
  /** Set for a call whose answer is read whole: the most bytes its decoded body may have. */
  wholeBodyLimit?: number
  /** The key of `model.upstream` this attempt sends; the key pool sets it, else the upstream's first key. */
  key?: UpstreamKey
  /**
   * The bytes and operation for another model (a fallback): renamed for one of the same format, translated for one of
   * another; a refusal when that model's format cannot express a field of the request.
   */
  attemptFor?: (model: ResolvedModel) => UpstreamAttempt | BodyRefusal
  /** Headers for this attempt only (trace context), as a flat `[name, value, …]` list; set by the attempt-events interceptor. */
  headers?: readonly string[]
  /**
   * The headers of the upstream's dialect this attempt carries, as a flat `[name, value, …]` list: the client's own
   * for an upstream of its dialect (Anthropic's version and betas), else the upstream's configured ones.
   */
  dialectHeaders: readonly string[]
}

/** What an upstream request sends to one model: its bytes, the operation they ask of it, and its dialect's headers. */
export type UpstreamAttempt = Pick<UpstreamRequest, 'body' | 'operation' | 'dialectHeaders'>

/** Why a model cannot be sent a call's request: the field its format cannot express (a path in the client's body). */
export interface BodyRefusal {
  refusedField: string
}

/**
 * How a call is stopped without an `AbortSignal` (which costs every call, where a stop is rare): the request sets
 * `abort` once connected; a `reason` set before that stops it as it connects.
 */
export interface AbortHook {
  abort?: (reason: Error) => void
  reason?: Error
}

/** Stops the call of `hook` now, or as soon as it connects. */
export function abortWith(hook: AbortHook, reason: Error): void {
  hook.reason = reason
  hook.abort?.(reason)
}

/** Which upstream, model and key answered: for usage events and logs (the key by its alias, never itself). */
export interface ServedBy {
  model: ResolvedModel
  keyAlias: string | undefined
}

/**
 * An upstream response. Its body is always plain (decoded) bytes: a stream not read yet, or, for a request with
 * `wholeBodyLimit`, the whole body already read.
 */
export interface UpstreamResponse {
  statusCode: number
  headers: IncomingHttpHeaders
  body: Readable | Buffer
  served: ServedBy
}

/** Sends one upstream request; rejects with a 502/504 GatewayError when no response head arrives. */
export type Send = (request: UpstreamRequest) => Promise<UpstreamResponse>

/** Headers of the upstream call: the gateway's own credentials (set once per upstream), never the client's. */
function upstreamHeaders(request: UpstreamRequest, key: UpstreamKey | undefined, body: Buffer): string[] {
  // Pushed one list after another: spreads into an array literal went through the iteration protocol, per call.
  const headers: string[] = []
  pushAll(headers, request.model.upstream.requestHeaders)
  if (key) pushAll(headers, key.headers)
  pushAll(headers, request.dialectHeaders)
  headers.push(
    'content-length',
    String(body.length),
    'accept',
    upstreamAccept(request.model.upstream.dialect.upstreamStreamAccept, request.stream),
  )
  if (request.headers) pushAll(headers, request.headers)
  return headers
}

function pushAll(into: string[], from: readonly string[]): void {
  for (let i = 0; i < from.length; i++) into.push(from[i] as string)
}

/**
 * What both ways of reading an answer share: the promise they settle, and the request's abort, handed to the
 * call's hook once connected (or used at once when the hook was pulled before).
 */
abstract class AnswerHandler implements Dispatcher.DispatchHandler {
  protected abort: ((error?: Error) => void) | undefined

  constructor(
    protected readonly served: ServedBy,
    protected readonly resolve: (response: UpstreamResponse) => void,
    protected readonly reject: (error: unknown) => void,
    private readonly hook: AbortHook | undefined,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort
    if (!this.hook) return
    if (this.hook.reason) abort(this.hook.reason)
    else this.hook.abort = abort
  }

  /** Settles the call with a GatewayError: no answer came, or none that can be passed on. */
  protected refuse(error: unknown): void {
    this.reject(isGatewayError(error) ? error : upstreamFailure(error))
  }
}

/**
 * Reads one answer whole through undici's handler interface: no response stream, no listeners and no promise per
 * chunk, which is most of what a small proxied call costs in `dispatcher.request`.
 */
class WholeAnswer extends AnswerHandler {
  private statusCode = 0
  private rawHeaders: Buffer[] = []
  private readonly chunks: Buffer[] = []
  private size = 0

  constructor(
    private readonly limit: number,
    private readonly decodeBudget: ByteBudget,
    served: ServedBy,
    resolve: (response: UpstreamResponse) => void,
    reject: (error: unknown) => void,
    hook: AbortHook | undefined,
    /** Reads a 2xx answer in the upstream's own shape as its spoken dialect's (`Dialect.upstreamAnswer`). */
    private readonly rewrite: ((body: Buffer) => Buffer) | undefined,
  ) {
    super(served, resolve, reject, hook)
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx heads are followed by the real one.
    if (statusCode >= 200) {
      this.statusCode = statusCode
      this.rawHeaders = rawHeaders
    }
    return true
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length
    if (this.size > this.limit) {
      this.abort?.(upstreamTooLarge(this.limit))
      return false
    }
    this.chunks.push(chunk)
    return true
  }

  onComplete(): void {
    const raw = joinedNow(this.chunks, this.size)
    if (raw) this.answer(raw)
    else joinInSlices(this.chunks, this.size).then((joined) => this.answer(joined), this.reject)
  }

  private answer(raw: Buffer): void {
    const headers = util.parseHeaders(this.rawHeaders) as IncomingHttpHeaders
    const errors = this.statusCode >= 300 ? this.served.model.upstream.dialect.upstreamErrors : undefined
    const statusCode = errors ? errors.status(this.statusCode, headers) : this.statusCode
    const answered = this.statusCode < 300 ? this.rewrite : undefined
    const read = (body: Buffer) => (errors ? errors.body(statusCode, headers, body) : answered ? answered(body) : body)
    if (headers['content-encoding'] === undefined) {
      this.resolve({ statusCode, headers, body: read(raw), served: this.served })
      return
    }
    decodedWhole(raw, headers['content-encoding'], this.limit, this.decodeBudget).then(
      (body) => this.resolve({ statusCode, headers, body: read(body), served: this.served }),
      (error: { code?: unknown }) => this.onError(error.code === 'ERR_BUFFER_TOO_LARGE' ? upstreamTooLarge(this.limit) : error),
    )
  }

  onError(error: unknown): void {
    this.refuse(error)
  }
}

/**
 * Hands an answer over as a stream once its head arrives, through undici's handler interface: no `AbortSignal`
 * and its listeners, no async resource, which `dispatcher.request` spends on every call before the first byte.
 * The body pauses the upstream while its reader does not read.
 */
class StreamedAnswer extends AnswerHandler {
  private body: Readable | undefined
  /** Reads the upstream's framing into SSE, for an upstream that frames streams otherwise; applied to 2xx answers. */
  private readonly framing: FramingReader | undefined

  constructor(
    served: ServedBy,
    resolve: (response: UpstreamResponse) => void,
    reject: (error: unknown) => void,
    hook: AbortHook | undefined,
    framing: FramingReader | undefined,
  ) {
    super(served, resolve, reject, hook)
    this.framing = framing
  }

  private resume: (() => void) | undefined
  private complete = false

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx heads are followed by the real one.
    if (statusCode < 200) return true
    this.resume = resume
    const body = new Readable({
      read: () => this.resume?.(),
      // A reader that stops early (a client gone, an answer dropped) stops the upstream call.
      destroy: (error, callback) => {
        if (!this.complete) this.abort?.(error ?? new Error('The upstream body was dropped before its end.'))
        callback(error)
      },
    })
    this.body = body
    const headers = util.parseHeaders(rawHeaders) as IncomingHttpHeaders
    const encoding = headers['content-encoding']
    try {
      const decoded = encoding === undefined ? body : decodedBody(body, encoding)
      const errors = statusCode >= 300 ? this.served.model.upstream.dialect.upstreamErrors : undefined
      if (errors) {
        const status = errors.status(statusCode, headers)
        this.resolve({
          statusCode: status,
          headers,
          body: errorBody(decoded, (bytes) => errors.body(status, headers, bytes)),
          served: this.served,
        })
        return true
      }
      const framed = this.framing !== undefined && statusCode < 300 ? this.framing(decoded) : decoded
      this.resolve({ statusCode, headers, body: framed, served: this.served })
    } catch (error) {
      this.refuse(error)
    }
    return true
  }

  onData(chunk: Buffer): boolean {
    return (this.body as Readable).push(chunk)
  }

  onComplete(): void {
    this.complete = true
    this.body?.push(null)
  }

  onError(error: Error): void {
    this.complete = true
    if (!this.body) {
      this.refuse(error)
      return
    }
    // Its reader may not listen yet (the head is still on its way through the interceptors) or any more: an
    // `error` nobody hears must not become an uncaught exception. Readers that listen still get it.
    this.body.on('error', ignore)
    this.body.destroy(error)
  }
}

const ignore = () => {}

/** The most bytes of an error answer read to rewrite it (`upstreamErrors`): error bodies are a line or two. */
const ERROR_BODY_LIMIT = 64 * 1024

/** An error answer's stream, read whole (up to `ERROR_BODY_LIMIT`, the rest dropped) and given back rewritten. */
function errorBody(body: Readable, rewrite: (bytes: Buffer) => Buffer): Readable {
  async function* read() {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of body) {
      if (size >= ERROR_BODY_LIMIT) continue
      chunks.push(chunk as Buffer)
      size += (chunk as Buffer).length
    }
    yield rewrite(Buffer.concat(chunks, size).subarray(0, ERROR_BODY_LIMIT))
  }
  return Readable.from(read(), { objectMode: false })
}

/** Each model's upstream paths, by operation: [whole, streamed]. */
const upstreamPaths = new WeakMap<ResolvedModel, Map<Operation, [string | undefined, string | undefined]>>()

/**
 * The path of a model's upstream call, made once per model, operation and streaming: a path made by joining strings
 * is a rope, which undici's checks of it flattened again through the runtime on every call. A dialect's
 * `upstreamPath` is a function of its arguments, all of them the model's configuration but the last two.
 */
function upstreamPathOf(model: ResolvedModel, operation: Operation, stream: boolean): string {
  let byOperation = upstreamPaths.get(model)
  if (byOperation === undefined) {
    byOperation = new Map()
    upstreamPaths.set(model, byOperation)
  }
  let paths = byOperation.get(operation)
  if (paths === undefined) {
    paths = [undefined, undefined]
    byOperation.set(operation, paths)
  }
  const at = stream ? 1 : 0
  let path = paths[at]
  if (path === undefined) {
    const { upstream } = model
    path = upstream.dialect.upstreamPath(upstream.basePath, model.upstreamModel, operation, stream, upstream.dialectOptions)
    // Flattened once here (a character read does it), not on every call that sends it.
    path.charCodeAt(0)
    paths[at] = path
  }
  return path
}

/**
 * The innermost `Send`: one POST through the gateway's agent, errors mapped to GatewayErrors. `decodeBudget` bounds
 * the bytes of compressed whole answers being decoded at once, all calls together.
 */
export function createSend(dispatcher: Dispatcher, decodeBudget: ByteBudget): Send {
  return (request) => {
    const { model, body } = request
    const { upstream } = model
    const key = request.key ?? upstream.keys[0]
    const served: ServedBy = { model, keyAlias: key?.alias }
    const options: Dispatcher.DispatchOptions & { headers: string[]; path: string; body: Buffer } = {
      origin: upstream.origin,
      path: upstreamPathOf(model, request.operation, request.stream),
      method: 'POST',
      headers: upstreamHeaders(request, key, body),
      body,
    }
    const limit = request.wholeBodyLimit
    // A whole answer in a shape of the upstream's own (Bedrock's token counts), read as its spoken dialect's.
    const answer = upstream.dialect.upstreamAnswer
    const rewrite = answer === undefined ? undefined : (bytes: Buffer) => answer(bytes, request.operation)
    const framing = request.stream ? upstream.dialect.upstreamFraming?.(request.operation, upstream.dialectOptions) : undefined
    // An upstream with a dispatcher of its own (a proxy for that one) takes it; the rest share the gateway's.
    const through = upstream.dispatcher ?? dispatcher
    const dispatch = (resolve: (response: UpstreamResponse) => void, reject: (error: unknown) => void) => {
      const handler =
        limit === undefined
          ? new StreamedAnswer(served, resolve, reject, request.abortHook, framing)
          : new WholeAnswer(limit, decodeBudget, served, resolve, reject, request.abortHook, rewrite)
      through.dispatch(options, handler)
    }
    const { authorizer } = upstream
    if (authorizer === undefined) return new Promise(dispatch)
    // Signed or given a token only now, with the exact bytes and path about to go; most upstreams skip this await.
    const outgoing = {
      method: 'POST',
      origin: upstream.origin as string,
      path: options.path,
      headers: options.headers,
      body,
      dispatcher: through,
    }
    return Promise.resolve(authorizer.authorize(outgoing)).then(() => new Promise(dispatch))
  }
}
