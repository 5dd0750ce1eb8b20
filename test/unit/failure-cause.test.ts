import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../src/errors.js'
import { failureCause, upstreamFailure } from '../../src/upstream/failure.js'

const coded = (code: string, message = 'connect failed') => Object.assign(new Error(message), { code })

describe('failureCause', () => {
  it('names the code beneath the gateway error, never a message', () => {
    const error = upstreamFailure(coded('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:443 sk-secret'))
    expect(error.code).toBe('upstream_unreachable')
    expect(failureCause(error)).toBe('ECONNREFUSED')
  })

  it('takes the deepest code of a wrapped error', () => {
    const wrapped = Object.assign(new TypeError('fetch failed'), { cause: coded('ERR_SSL_WRONG_VERSION_NUMBER') })
    expect(failureCause(upstreamFailure(wrapped))).toBe('ERR_SSL_WRONG_VERSION_NUMBER')
  })

  it('reads the first error of a connection tried on several addresses', () => {
    const both = new AggregateError([coded('ECONNREFUSED'), coded('ENETUNREACH')], 'all failed')
    expect(failureCause(upstreamFailure(both))).toBe('ECONNREFUSED')
  })

  it('says timeout for an abort by timer, and the name of an error with no code', () => {
    expect(failureCause(upstreamFailure(new DOMException('The operation timed out.', 'TimeoutError')))).toBe('timeout')
    expect(failureCause(upstreamFailure(new RangeError('x')))).toBe('RangeError')
    expect(failureCause(new GatewayError('upstream_unreachable', 'no cause'))).toBeUndefined()
    expect(failureCause(undefined)).toBeUndefined()
  })

  it('stops on a cause chain that loops', () => {
    const a: Error & { cause?: unknown } = coded('EPIPE')
    a.cause = a
    expect(failureCause(a)).toBe('EPIPE')
  })
})
