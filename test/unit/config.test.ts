import { describe, expect, it } from 'vitest'
import { nearestName } from '../../src/config/suggest.js'
import { GatewayError, isGatewayError, STATUS_BY_CODE } from '../../src/errors.js'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'

const valid: GatewayOptions = {
  upstreams: { openai: { type: 'openai', baseUrl: 'https://api.example.com/v1', apiKey: 'k' } },
  models: [{ id: 'gpt-4o-mini', upstream: 'openai' }],
  auth: { apiKeys: ['sk-1'] },
}

function thrown(options: unknown): GatewayError {
  try {
    createGateway(options as GatewayOptions)
  } catch (error) {
    if (isGatewayError(error)) return error
    throw error
  }
  throw new Error('createGateway accepted the options')
}

describe('unknown option keys', () => {
  it.each([
    [{ ...valid, timeout: { upstreamMs: 1 } }, 'timeout is not an option; did you mean `timeouts`?'],
    [{ ...valid, recovery: { ttl: 1 } }, 'recovery.ttl is not an option; did you mean `ttlMs`?'],
    [{ ...valid, limits: { maxRequestByte: 1 } }, 'limits.maxRequestByte is not an option; did you mean `maxRequestBytes`?'],
    [
      { ...valid, upstreams: { o: { type: 'openai', baseUrl: 'https://x', apikey: 'k' } } },
      'upstreams.o.apikey is not an option; did you mean `apiKey`?',
    ],
    [
      { ...valid, models: [{ id: 'm', upstream: 'openai', upstreamModle: 'x' }] },
      'models[0].upstreamModle is not an option; did you mean `upstreamModel`?',
    ],
    [{ ...valid, auth: { apiKey: ['sk-1'] } }, 'auth.apiKey is not an option; did you mean `apiKeys`?'],
  ])('rejects %j naming the nearest valid key', (options, message) => {
    const error = thrown(options)
    expect(error.code).toBe('invalid_options')
    expect(error.message.startsWith(message)).toBe(true)
  })

  it('names no key when none is near, and lists the known ones', () => {
    const error = thrown({ ...valid, zzzzzzzz: 1 })
    expect(error.message).toMatch(
      /^zzzzzzzz is not an option \(known: upstreams, models, auth, store, recovery, idempotency, background, limits, timeouts, keepAlive, cors, translation, cache, console, pricing, onUsage, logger, interceptors, dispatcher, proxy\)$/,
    )
  })
})

describe('nearestName', () => {
  it('finds typos and prefixes, and nothing far away', () => {
    expect(nearestName('timout', ['timeouts', 'limits'])).toBe('timeouts')
    expect(nearestName('maxRequest', ['maxRequestBytes', 'maxResponseBytes'])).toBe('maxRequestBytes')
    expect(nearestName('colour', ['upstreams', 'models'])).toBeUndefined()
  })
})

describe('GatewayError', () => {
  it('gives a construction error no HTTP status, and every request code one', () => {
    expect(new GatewayError('invalid_options', 'x').status).toBeUndefined()
    for (const [code, status] of Object.entries(STATUS_BY_CODE)) {
      expect(new GatewayError(code as keyof typeof STATUS_BY_CODE, 'x').status).toBe(status)
    }
  })

  it('is an instance by brand, so an error from another copy of the package passes instanceof', () => {
    const foreign = Object.assign(new Error('x'), { [Symbol.for('model-gateway.GatewayError')]: true, code: 'not_found' })
    expect(foreign instanceof GatewayError).toBe(true)
    expect(new Error('x') instanceof GatewayError).toBe(false)
    expect((null as unknown as object) instanceof GatewayError).toBe(false)
  })
})

describe('background options', () => {
  it.each([
    [{ ...valid, background: { maxEvents: 0 } }, 'background.maxEvents must be a positive integer, got 0'],
    [{ ...valid, background: { maxBytes: 1.5 } }, 'background.maxBytes must be a positive integer, got 1.5'],
    [{ ...valid, background: { leaseMs: '30s' } }, 'background.leaseMs must be a positive integer, got 30s'],
    [{ ...valid, background: { lease: 1000 } }, 'background.lease is not an option; did you mean `leaseMs`?'],
    [{ ...valid, background: true }, 'background must be an object'],
  ])('rejects %j naming the option', (options, message) => {
    const error = thrown(options)
    expect(error.code).toBe('invalid_options')
    expect(error.message.startsWith(message)).toBe(true)
  })
})
