import { describe, expect, it } from 'vitest'
import type { ResolvedModel } from '../../../src/config/resolve.js'
import { GatewayError } from '../../../src/errors.js'
import { CIRCUIT_OPEN } from '../../../src/upstream/interceptors/circuit.js'
import { fallbacks, neverSent } from '../../../src/upstream/interceptors/fallback.js'
import type { BodyRefusal, UpstreamAttempt, UpstreamRequest } from '../../../src/upstream/send.js'
import { modelsOf, openBody, recordingLogger, requestFor, scriptedNext, sendFailures, trackedBody } from '../../support/fake-send.js'

// `main` falls back to `spare` (same format, another upstream), then `other` (another format).
const models = modelsOf({
  upstreams: {
    primary: { type: 'openai', baseUrl: 'https://primary.example.test/v1', apiKey: 'sk-primary' },
    backup: { type: 'openai', baseUrl: 'https://backup.example.test/v1', apiKey: 'sk-backup' },
    gem: { type: 'gemini', baseUrl: 'https://gem.example.test', apiKey: 'gem-key' },
  },
  models: [
    { id: 'main', upstream: 'primary', fallbacks: ['spare', 'other'] },
    { id: 'spare', upstream: 'backup' },
    { id: 'other', upstream: 'gem', upstreamModel: 'gemini-2.5-flash' },
    { id: 'alone', upstream: 'primary' },
  ],
})
const main = models.get('main')!

/**
 * Each model's bytes and operation, as the call's bodies would give them (a model of another upstream is asked the
 * call translated: `generateContent` here); `refused` models cannot express `field`.
 */
function bodies(refused: string[] = [], field = 'messages[0].content[1]') {
  return (model: ResolvedModel): UpstreamAttempt | BodyRefusal =>
    refused.includes(model.id)
      ? { refusedField: field }
      : {
          body: Buffer.from(`for ${model.id}`),
          operation: model.upstream.dialect === main.upstream.dialect ? 'chat.completions' : 'generateContent',
          dialectHeaders: ['x-dialect-header', `for ${model.id}`],
        }
}

const call = (overrides: Partial<UpstreamRequest> = {}) => requestFor(main, { attemptFor: bodies(), attempt: 1, ...overrides })
const modelIds = (next: { calls: UpstreamRequest[] }) => next.calls.map((request) => request.model.id)

describe('fallbacks: when the upstream cannot have started billable work', () => {
  it.each(
    Object.entries({
      'a refused connection': sendFailures.refused,
      'a name that does not resolve': sendFailures.noAddress,
      'a connect timeout': sendFailures.connectTimeout,
      'a TLS certificate refused': sendFailures.expiredCertificate,
    }),
  )('%s: the next model is tried with its own bytes, as a new attempt', async (_, failure) => {
    const { logger } = recordingLogger()
    const next = scriptedNext({ error: failure() }, { status: 200 })
    const response = await fallbacks(logger)(next)(call({ key: main.upstream.keys[0] }))
    expect(response.statusCode).toBe(200)
    expect(response.served.model.id).toBe('spare')
    expect(modelIds(next)).toEqual(['main', 'spare'])
    const second = next.calls[1]!
    expect(second.body.toString()).toBe('for spare')
    expect(second.attempt).toBe(2)
    // The first model's key means nothing to another upstream.
    expect(second.key).toBeUndefined()
  })

  it('a call an open circuit refused is one nothing was sent for', async () => {
    const refusal = new GatewayError('upstream_unreachable', 'resting', {
      cause: Object.assign(new Error('circuit open'), { code: CIRCUIT_OPEN }),
    })
    expect(neverSent(refusal)).toBe(true)
    const next = scriptedNext({ error: refusal }, { status: 200 })
    await fallbacks(recordingLogger().logger)(next)(call())
    expect(modelIds(next)).toEqual(['main', 'spare'])
  })

  it.each([
    [429, { 'retry-after': '20' }],
    [500, {}],
    [502, {}],
    [503, { 'retry-after': '30' }],
    [504, {}],
    [529, {}],
  ])('an answer of %i: its body is drained and the next model answers', async (status, headers) => {
    const failed = trackedBody()
    const next = scriptedNext({ status, headers, body: failed.body }, { status: 200 })
    const response = await fallbacks(recordingLogger().logger)(next)(call())
    expect(response.served.model.id).toBe('spare')
    expect(failed.drained).toBe(true)
  })

  it('goes down the list in order, and translates for a model of another format', async () => {
    const next = scriptedNext({ status: 503 }, { error: sendFailures.refused() }, { status: 200 })
    const response = await fallbacks(recordingLogger().logger)(next)(call())
    expect(response.served.model.id).toBe('other')
    expect(modelIds(next)).toEqual(['main', 'spare', 'other'])
    expect(next.calls.map((request) => request.attempt)).toEqual([1, 2, 3])
    expect(next.calls[2]?.body.toString()).toBe('for other')
    // Each attempt asks its upstream the operation its bytes are: the fallback of another format, the translated one.
    expect(next.calls.map((request) => request.operation)).toEqual(['chat.completions', 'chat.completions', 'generateContent'])
    // And carries the dialect headers made for its own model, never the first model's.
    expect(next.calls.slice(1).map((request) => request.dialectHeaders)).toEqual([
      ['x-dialect-header', 'for spare'],
      ['x-dialect-header', 'for other'],
    ])
  })

  it("answers with the last model's failure when every model failed: its answer, or its error", async () => {
    const last = trackedBody('{"error":"last"}')
    const answered = scriptedNext({ status: 503 }, { status: 502 }, { status: 529, body: last.body })
    const response = await fallbacks(recordingLogger().logger)(answered)(call())
    expect(response.statusCode).toBe(529)
    expect(response.served.model.id).toBe('other')
    expect(response.body).toBe(last.body)
    expect(last.drained).toBe(false)

    const lastError = sendFailures.connectTimeout()
    const failed = scriptedNext({ status: 503 }, { error: sendFailures.refused() }, { error: lastError })
    await expect(fallbacks(recordingLogger().logger)(failed)(call())).rejects.toBe(lastError)
  })
})

describe('fallbacks: never once the upstream may be at work', () => {
  it.each(
    Object.entries({
      'a response head that did not come in time': sendFailures.headersTimeout,
      'a body that stopped coming': sendFailures.bodyTimeout,
      'a connection the upstream closed': sendFailures.closedBySocket,
      'a connection reset': sendFailures.reset,
    }),
  )("%s: the error is the call's, and no other model is tried", async (_, failure) => {
    const error = failure()
    expect(neverSent(error)).toBe(false)
    const next = scriptedNext({ error }, { status: 200 })
    await expect(fallbacks(recordingLogger().logger)(next)(call())).rejects.toBe(error)
    expect(modelIds(next)).toEqual(['main'])
  })

  it('an error that is not a GatewayError is not guessed at, whatever its code', async () => {
    const error = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const next = scriptedNext({ error }, { status: 200 })
    await expect(fallbacks(recordingLogger().logger)(next)(call())).rejects.toBe(error)
    expect(modelIds(next)).toEqual(['main'])
  })

  it.each([200, 400, 401, 404, 413, 501])("an answer of %i is the call's, as it came", async (status) => {
    const next = scriptedNext({ status }, { status: 200 })
    const response = await fallbacks(recordingLogger().logger)(next)(call())
    expect(response.statusCode).toBe(status)
    expect(modelIds(next)).toEqual(['main'])
  })

  it("a 200 whose stream breaks later is past falling back: the broken body is the caller's", async () => {
    const streaming = openBody()
    const next = scriptedNext({ status: 200, body: streaming }, { status: 200 })
    const response = await fallbacks(recordingLogger().logger)(next)(call())
    const broke = new Promise((resolve) => streaming.once('error', resolve))
    streaming.destroy(new Error('other side closed'))
    await broke
    expect(response.body).toBe(streaming)
    expect(modelIds(next)).toEqual(['main'])
  })
})

describe('fallbacks whose format cannot express the request', () => {
  it('are skipped, each with a warn line naming the field', async () => {
    const { logger, lines } = recordingLogger()
    const next = scriptedNext({ status: 503 }, { status: 200 })
    const response = await fallbacks(logger)(next)(call({ attemptFor: bodies(['spare'], 'tools[0]') }))
    expect(response.served.model.id).toBe('other')
    expect(modelIds(next)).toEqual(['main', 'other'])
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'model-gateway: fallback skipped: its format cannot express a field of the request',
        meta: { requestId: 'req_1', model: 'spare', upstream: 'backup', field: 'tools[0]' },
      },
    ])
  })

  it("leave the call the asked model's failure when none can take it", async () => {
    const { logger, lines } = recordingLogger()
    const failure = sendFailures.refused()
    const next = scriptedNext({ error: failure })
    await expect(fallbacks(logger)(next)(call({ attemptFor: bodies(['spare', 'other']) }))).rejects.toBe(failure)
    expect(modelIds(next)).toEqual(['main'])
    expect(lines.map((line) => line.meta?.model)).toEqual(['spare', 'other'])
  })
})

describe('a call with nowhere to fall back to', () => {
  it.each([
    ['a model without fallbacks', () => requestFor(models.get('alone')!, { attemptFor: bodies() })],
    ['a request without bodies for other models', () => requestFor(main)],
  ])('%s goes straight through, its failure its own', async (_, request) => {
    const sent = request()
    const next = scriptedNext({ status: 503 }, { status: 200 })
    const response = await fallbacks(recordingLogger().logger)(next)(sent)
    expect(response.statusCode).toBe(503)
    expect(next.calls).toHaveLength(1)
    expect(next.calls[0]).toBe(sent)
  })
})
