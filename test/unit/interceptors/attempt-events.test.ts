import diagnosticsChannel from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { gatewayChannels, type UpstreamAttemptMessage, type UpstreamRequestMessage } from '../../../src/observe/channels.js'
import { attemptEvents } from '../../../src/upstream/interceptors/attempt-events.js'
import type { UpstreamRequest } from '../../../src/upstream/send.js'
import { answer, modelsOf, requestFor, scriptedNext, sendFailures } from '../../support/fake-send.js'

const models = modelsOf({
  upstreams: {
    primary: { type: 'openai', baseUrl: 'https://primary.example.test/v1', apiKey: 'sk-primary' },
    gem: { type: 'gemini', baseUrl: 'https://gem.example.test', apiKey: 'gem-key' },
  },
  models: [
    { id: 'renamed', upstream: 'primary', upstreamModel: 'upstream-name' },
    { id: 'g', upstream: 'gem', upstreamModel: 'gemini-2.5-flash' },
  ],
})

const GATEWAY = 'gw-attempt-events'
/** What happened, in order: each message published and each call that reached the upstream. */
let seen: Array<
  { what: 'request'; message: UpstreamRequestMessage } | { what: 'attempt'; message: UpstreamAttemptMessage } | { what: 'sent' }
>
/** Headers the `upstream:request` subscriber adds to the next attempt. */
let addHeaders: string[] = []

const onRequest = (message: unknown) => {
  const request = message as UpstreamRequestMessage
  if (request.gatewayId !== GATEWAY) return
  // A copy as published: the list itself is the one the interceptor then sends.
  seen.push({ what: 'request', message: { ...request, headers: [...request.headers] } })
  request.headers.push(...addHeaders)
}
const onAttempt = (message: unknown) => {
  const attempt = message as UpstreamAttemptMessage
  if (attempt.gatewayId === GATEWAY) seen.push({ what: 'attempt', message: attempt })
}

/** A fake upstream that notes when it is reached; its answers come from `steps`. */
function upstream(...steps: Parameters<typeof scriptedNext>) {
  const next = scriptedNext(...steps)
  const send = (request: UpstreamRequest) => {
    seen.push({ what: 'sent' })
    return next(request)
  }
  return Object.assign(send, { calls: next.calls })
}

/** performance.now() as the interceptor reads it: the start, then the end of the attempt. */
const clock = (start: number, end: number) => vi.spyOn(performance, 'now').mockReturnValueOnce(start).mockReturnValueOnce(end)

beforeEach(() => {
  seen = []
  addHeaders = []
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('attempt events, with subscribers', () => {
  beforeEach(() => {
    diagnosticsChannel.subscribe(gatewayChannels.upstreamRequest, onRequest)
    diagnosticsChannel.subscribe(gatewayChannels.upstreamAttempt, onAttempt)
  })
  afterEach(() => {
    diagnosticsChannel.unsubscribe(gatewayChannels.upstreamRequest, onRequest)
    diagnosticsChannel.unsubscribe(gatewayChannels.upstreamAttempt, onAttempt)
  })

  it('publishes upstream:request before the attempt and upstream:attempt once its head came', async () => {
    const next = upstream({ status: 200 })
    clock(1_000, 1_250.5)
    const request = requestFor(models.get('renamed')!, { requestId: 'req_9', attempt: 2 })
    const response = await attemptEvents(GATEWAY)(next)(request)
    expect(response.statusCode).toBe(200)
    expect(seen.map((event) => event.what)).toEqual(['request', 'sent', 'attempt'])
    expect(seen[0]).toEqual({
      what: 'request',
      message: {
        gatewayId: GATEWAY,
        requestId: 'req_9',
        upstream: 'primary',
        provider: 'openai',
        operation: 'chat.completions',
        model: 'upstream-name',
        stream: true,
        attempt: 2,
        headers: [],
      },
    })
    expect(seen[2]).toEqual({
      what: 'attempt',
      message: {
        gatewayId: GATEWAY,
        requestId: 'req_9',
        upstream: 'primary',
        model: 'upstream-name',
        attempt: 2,
        durationMs: 250.5,
        status: 200,
      },
    })
  })

  it("names the provider as OpenTelemetry does, for each upstream's format", async () => {
    await attemptEvents(GATEWAY)(upstream({ status: 200 }))(requestFor(models.get('g')!, { stream: false }))
    expect(seen[0]).toMatchObject({ message: { provider: 'gcp.gemini', upstream: 'gem', model: 'gemini-2.5-flash', stream: false } })
  })

  it('publishes a failed attempt with its GatewayError code, and passes the error on', async () => {
    const timeout = sendFailures.headersTimeout()
    clock(10, 40)
    await expect(attemptEvents(GATEWAY)(upstream({ error: timeout }))(requestFor(models.get('renamed')!))).rejects.toBe(timeout)
    expect(seen[2]).toEqual({
      what: 'attempt',
      message: {
        gatewayId: GATEWAY,
        requestId: 'req_1',
        upstream: 'primary',
        model: 'upstream-name',
        attempt: 1,
        durationMs: 30,
        error: 'upstream_timeout',
      },
    })
  })

  it('calls an error that is not a GatewayError internal_error', async () => {
    const bug = new TypeError('a bug')
    await expect(attemptEvents(GATEWAY)(upstream({ error: bug }))(requestFor(models.get('renamed')!))).rejects.toBe(bug)
    expect(seen[2]).toMatchObject({ what: 'attempt', message: { error: 'internal_error' } })
    expect(seen[2]?.what === 'attempt' && 'status' in seen[2].message).toBe(false)
  })

  it('sends the headers a subscriber added with that attempt only', async () => {
    const next = upstream({ status: 503 }, { status: 200 })
    const send = attemptEvents(GATEWAY)(next)
    const request = requestFor(models.get('renamed')!)
    addHeaders = ['traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01']
    await send(request)
    expect(next.calls[0]?.headers).toEqual(['traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'])
    // A later attempt of the same request (an outer interceptor's copy) gets only what its own message was given.
    addHeaders = []
    await send({ ...request, attempt: 2 })
    expect(next.calls[1]?.headers).toBeUndefined()
  })
})

describe('attempt events, with nobody subscribed', () => {
  it("passes the request and its answer through as they are, without an earlier attempt's trace headers", async () => {
    const model = models.get('renamed')!
    const response = answer(requestFor(model), 200)
    const next = scriptedNext(async () => response)
    const request = requestFor(model, { headers: ['traceparent', '00-stale'] })
    expect(await attemptEvents(GATEWAY)(next)(request)).toBe(response)
    expect(next.calls[0]).toBe(request)
    expect(request.headers).toBeUndefined()
    expect(seen).toEqual([])
  })

  it('publishes attempts to a subscriber of upstream:attempt alone, and sends no headers', async () => {
    diagnosticsChannel.subscribe(gatewayChannels.upstreamAttempt, onAttempt)
    try {
      const next = scriptedNext({ status: 429 })
      await attemptEvents(GATEWAY)(next)(requestFor(models.get('renamed')!, { headers: ['traceparent', '00-stale'] }))
      expect(next.calls[0]?.headers).toBeUndefined()
      expect(seen).toMatchObject([{ what: 'attempt', message: { status: 429, attempt: 1 } }])
    } finally {
      diagnosticsChannel.unsubscribe(gatewayChannels.upstreamAttempt, onAttempt)
    }
  })
})
