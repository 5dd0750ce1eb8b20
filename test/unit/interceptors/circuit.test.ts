import diagnosticsChannel from 'node:diagnostics_channel'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { gatewayChannels, type UpstreamCircuitMessage } from '../../../src/observe/channels.js'
import { CIRCUIT_OPEN, circuitBreaker } from '../../../src/upstream/interceptors/circuit.js'
import { neverSent } from '../../../src/upstream/interceptors/fallback.js'
import type { Send } from '../../../src/upstream/send.js'
import { type FakeNext, heldStep, modelsOf, requestFor, type Step, scriptedNext, sendFailures } from '../../support/fake-send.js'

const FAILURES = 3
const COOLDOWN_MS = 10_000

/** Two models on two upstreams, each circuit opening after 3 failures in a row and resting 10 s. */
function upstreams() {
  const circuit = { failures: FAILURES, cooldownMs: COOLDOWN_MS }
  const models = modelsOf({
    upstreams: {
      flaky: { type: 'openai', baseUrl: 'https://flaky.example.test/v1', apiKey: 'sk-flaky', circuit },
      steady: { type: 'openai', baseUrl: 'https://steady.example.test/v1', apiKey: 'sk-steady', circuit },
    },
    models: [
      { id: 'f', upstream: 'flaky' },
      { id: 's', upstream: 'steady' },
    ],
  })
  return { flaky: models.get('f')!, steady: models.get('s')! }
}

let gatewayId = ''
let published: UpstreamCircuitMessage[] = []
const listen = (message: unknown) => {
  const circuit = message as UpstreamCircuitMessage
  if (circuit.gatewayId === gatewayId) published.push(circuit)
}

beforeEach(() => {
  vi.useFakeTimers()
  gatewayId = `gw-${Math.random()}`
  published = []
  diagnosticsChannel.subscribe(gatewayChannels.upstreamCircuit, listen)
})
afterEach(() => {
  diagnosticsChannel.unsubscribe(gatewayChannels.upstreamCircuit, listen)
  vi.useRealTimers()
})

/** A circuit breaker in front of `steps`, and one call to the flaky upstream's model. */
function breaker(...steps: Step[]) {
  const { flaky, steady } = upstreams()
  const circuits = circuitBreaker(gatewayId)
  const next: FakeNext = scriptedNext(...steps)
  const send: Send = circuits.interceptor(next)
  return {
    next,
    send,
    call: () => send(requestFor(flaky)),
    states: () => circuits.states([flaky.upstream, steady.upstream]),
    steady,
  }
}

/** Settles a call whatever it does: an answer's status or the rejection's GatewayError code. */
const outcome = (promise: Promise<{ statusCode: number }>) =>
  promise.then(
    (response) => response.statusCode,
    (error: { code?: string }) => error.code,
  )

const states = () => published.map((message) => message.state)

describe('the circuit breaker', () => {
  it(`opens after ${FAILURES} failed calls in a row, then refuses at once without calling the upstream`, async () => {
    const b = breaker({ status: 503 }, { status: 500 }, { error: sendFailures.refused() })
    expect(await outcome(b.call())).toBe(503)
    expect(await outcome(b.call())).toBe(500)
    expect(b.states().flaky).toBe('closed')
    expect(await outcome(b.call())).toBe('upstream_unreachable')
    expect(b.states().flaky).toBe('open')
    expect(published).toEqual([{ gatewayId, upstream: 'flaky', state: 'open' }])

    const refusal = await b.call().catch((error: unknown) => error)
    expect(refusal).toMatchObject({ code: 'upstream_unreachable', cause: { code: CIRCUIT_OPEN } })
    // Nothing was sent: a fallback may take the call.
    expect(neverSent(refusal)).toBe(true)
    expect(b.next.calls).toHaveLength(FAILURES)
  })

  it('counts failures in a row only: a success starts the count again', async () => {
    const b = breaker({ status: 503 }, { status: 429 }, { status: 200 }, { status: 529 }, { status: 502 }, { status: 200 })
    const statuses = []
    for (let i = 0; i < 6; i++) statuses.push(await outcome(b.call()))
    expect(statuses).toEqual([503, 429, 200, 529, 502, 200])
    expect(b.states().flaky).toBe('closed')
    expect(published).toEqual([])
  })

  it("counts the client's errors as healthy answers", async () => {
    const b = breaker({ status: 400 }, { status: 401 }, { status: 404 }, { status: 413 }, { status: 200 })
    for (let i = 0; i < 5; i++) await b.call()
    expect(b.states().flaky).toBe('closed')
  })

  it('does not blame the upstream for a timeout or a broken connection (the model may be slow), only for one never made', async () => {
    const slow = breaker(
      { error: sendFailures.headersTimeout() },
      { error: sendFailures.reset() },
      { error: sendFailures.closedBySocket() },
      { error: sendFailures.bodyTimeout() },
      { status: 200 },
    )
    for (let i = 0; i < 5; i++) await outcome(slow.call())
    expect(slow.next.calls).toHaveLength(5)
    expect(slow.states().flaky).toBe('closed')

    const unreachable = breaker(
      { error: sendFailures.noAddress() },
      { error: sendFailures.connectTimeout() },
      { error: sendFailures.expiredCertificate() },
    )
    for (let i = 0; i < 3; i++) await outcome(unreachable.call())
    expect(unreachable.states().flaky).toBe('open')
  })

  it('keeps a circuit per upstream: another upstream still gets its calls', async () => {
    const b = breaker({ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 })
    for (let i = 0; i < 3; i++) await b.call()
    expect((await b.send(requestFor(b.steady))).statusCode).toBe(200)
    expect(b.next.calls.map((request) => request.model.id)).toEqual(['f', 'f', 'f', 's'])
    expect(b.states()).toEqual({ flaky: 'open', steady: 'closed' })
  })
})

describe('an open circuit after its cooldown', () => {
  /** A breaker whose first three calls opened its circuit; `after` are the steps of the calls it lets through next. */
  async function opened(...after: Step[]) {
    const b = breaker({ status: 503 }, { status: 503 }, { status: 503 }, ...after)
    for (let i = 0; i < FAILURES; i++) await b.call()
    expect(b.states().flaky).toBe('open')
    return b
  }

  it('lets one probe through, refusing other calls while it runs; its success closes the circuit', async () => {
    const probe = heldStep()
    const b = await opened(probe.step, { status: 200 })
    vi.advanceTimersByTime(COOLDOWN_MS - 1)
    expect(await outcome(b.call())).toBe('upstream_unreachable')
    vi.advanceTimersByTime(1)
    const probing = outcome(b.call())
    expect(b.states().flaky).toBe('half-open')
    // A second call while the probe runs is refused: one probe at a time.
    const meanwhile = await b.call().catch((error: unknown) => error)
    expect(meanwhile).toMatchObject({ cause: { code: CIRCUIT_OPEN } })
    probe.settle(200)
    expect(await probing).toBe(200)
    expect(b.states().flaky).toBe('closed')
    expect(await outcome(b.call())).toBe(200)
    expect(b.next.calls).toHaveLength(FAILURES + 2)
    expect(states()).toEqual(['open', 'half-open', 'closed'])
  })

  it('opens again at the first failed probe, for another whole cooldown', async () => {
    const b = await opened({ status: 503 }, { error: sendFailures.refused() }, { status: 200 })
    vi.advanceTimersByTime(COOLDOWN_MS)
    expect(await outcome(b.call())).toBe(503)
    expect(b.states().flaky).toBe('open')
    vi.advanceTimersByTime(COOLDOWN_MS - 1)
    expect(await outcome(b.call())).toBe('upstream_unreachable')
    expect(b.next.calls).toHaveLength(FAILURES + 1)
    vi.advanceTimersByTime(1)
    // The second probe reaches the upstream, which still cannot be reached.
    expect(await outcome(b.call())).toBe('upstream_unreachable')
    expect(b.next.calls).toHaveLength(FAILURES + 2)
    vi.advanceTimersByTime(COOLDOWN_MS)
    expect(await outcome(b.call())).toBe(200)
    expect(b.next.calls).toHaveLength(FAILURES + 3)
    expect(states()).toEqual(['open', 'half-open', 'open', 'half-open', 'open', 'half-open', 'closed'])
  })

  it('counts a probe that timed out as healthy: the upstream answered the connection', async () => {
    const b = await opened({ error: sendFailures.headersTimeout() })
    vi.advanceTimersByTime(COOLDOWN_MS)
    expect(await outcome(b.call())).toBe('upstream_timeout')
    expect(b.states().flaky).toBe('closed')
  })
})

describe('circuit states', () => {
  it('are closed for upstreams never called', () => {
    const { flaky, steady } = upstreams()
    expect(circuitBreaker(gatewayId).states([flaky.upstream, steady.upstream])).toEqual({ flaky: 'closed', steady: 'closed' })
  })
})
