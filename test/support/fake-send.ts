// A scripted stand-in for the gateway's innermost `Send`, so the upstream interceptors can be driven without a
// network: each call takes the next step of a script and is recorded with the request it was given.
import type { IncomingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import { errors } from 'undici'
import { type ResolvedModel, resolveOptions } from '../../src/config/resolve.js'
import type { GatewayLogger, GatewayOptions } from '../../src/types.js'
import { upstreamFailure } from '../../src/upstream/failure.js'
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/send.js'

/** The models of a small configuration, resolved as `createGateway` resolves them. */
export function modelsOf(config: Pick<GatewayOptions, 'upstreams' | 'models'>): Map<string, ResolvedModel> {
  return resolveOptions({ ...config, auth: { apiKeys: ['sk-client'] } }).models
}

/** A call's first attempt at `model`, a chat stream unless `overrides` say otherwise. */
export function requestFor(model: ResolvedModel, overrides: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    requestId: 'req_1',
    model,
    operation: 'chat.completions',
    stream: true,
    attempt: 1,
    body: Buffer.from(`{"model":"${model.id}"}`),
    dialectHeaders: [],
    ...overrides,
  }
}

/** A streamed body that says whether it was read to its end (drained). */
export interface TrackedBody {
  body: Readable
  readonly drained: boolean
}

/** A streamed upstream body of `text`, left unread until someone reads it. */
export function trackedBody(text = '{"error":{}}'): TrackedBody {
  const body = Readable.from([Buffer.from(text)], { objectMode: false })
  const tracked = { body, drained: false }
  body.once('end', () => (tracked.drained = true))
  return tracked
}

/** A streamed body that stays open (as a model still generating) until the test destroys it. */
export function openBody(): Readable {
  return new Readable({ read() {} })
}

/** One scripted outcome: an answer's head (and body), an error the send rejects with, or a function of the request. */
export type Step =
  | { status: number; headers?: IncomingHttpHeaders; body?: Readable | Buffer }
  | { error: unknown }
  | ((request: UpstreamRequest) => Promise<UpstreamResponse>)

/** A fake innermost `Send` and the requests it was given, in order. */
export interface FakeNext {
  (request: UpstreamRequest): Promise<UpstreamResponse>
  readonly calls: UpstreamRequest[]
}

/** The answer the real send gives for `request`: served by its model and the key it was sent with. */
export function answer(request: UpstreamRequest, status: number, headers: IncomingHttpHeaders = {}, body?: Readable | Buffer) {
  const key = request.key ?? request.model.upstream.keys[0]
  return {
    statusCode: status,
    headers,
    body: body ?? Buffer.from('{}'),
    served: { model: request.model, keyAlias: key?.alias },
  } satisfies UpstreamResponse
}

/** A `Send` that answers each call with the next step; a call past the end of the script fails the test. */
export function scriptedNext(...steps: Step[]): FakeNext {
  const calls: UpstreamRequest[] = []
  const next = (request: UpstreamRequest): Promise<UpstreamResponse> => {
    calls.push(request)
    const step = steps[calls.length - 1]
    if (step === undefined) return Promise.reject(new Error(`unscripted call ${calls.length} to ${request.model.id}`))
    if (typeof step === 'function') return step(request)
    if ('error' in step) return Promise.reject(step.error)
    return Promise.resolve(answer(request, step.status, step.headers, step.body))
  }
  return Object.assign(next, { calls })
}

/** A step that waits for the test: `settle` answers it, `fail` rejects it. */
export function heldStep() {
  let settle!: (status: number) => void
  let fail!: (error: unknown) => void
  const step = (request: UpstreamRequest) =>
    new Promise<UpstreamResponse>((resolve, reject) => {
      settle = (status) => resolve(answer(request, status))
      fail = reject
    })
  return { step, settle: (status: number) => settle(status), fail: (error: unknown) => fail(error) }
}

/** A Node socket error as undici passes it on (`connect ECONNREFUSED …`), with its `code`. */
function socketError(code: string, syscall: string): Error {
  return Object.assign(new Error(`${syscall} ${code} 203.0.113.7:443`), { code, syscall, errno: -1 })
}

/**
 * What the real send rejects with for each way a call can fail: a GatewayError whose `cause` is undici's (or the
 * socket's) own error, so `cause.code` is the code undici reports.
 */
export const sendFailures = {
  refused: () => upstreamFailure(socketError('ECONNREFUSED', 'connect')),
  noAddress: () => upstreamFailure(socketError('ENOTFOUND', 'getaddrinfo')),
  connectTimeout: () => upstreamFailure(new errors.ConnectTimeoutError()),
  expiredCertificate: () => upstreamFailure(Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' })),
  headersTimeout: () => upstreamFailure(new errors.HeadersTimeoutError()),
  bodyTimeout: () => upstreamFailure(new errors.BodyTimeoutError()),
  closedBySocket: () => upstreamFailure(new errors.SocketError('other side closed')),
  reset: () => upstreamFailure(socketError('ECONNRESET', 'read')),
}

/** A logger that keeps its lines; `lines` are every level's, in order. */
export function recordingLogger() {
  const lines: Array<{ level: 'info' | 'warn' | 'error'; message: string; meta: Record<string, unknown> | undefined }> = []
  const logger: GatewayLogger = {
    info: (message, meta) => lines.push({ level: 'info', message, meta }),
    warn: (message, meta) => lines.push({ level: 'warn', message, meta }),
    error: (message, meta) => lines.push({ level: 'error', message, meta }),
  }
  return { logger, lines }
}
