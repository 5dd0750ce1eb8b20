import { describe, expect, it } from 'vitest'
import { outermostFirst, type UpstreamInterceptor } from '../../../src/upstream/interceptors/compose.js'
import type { Send } from '../../../src/upstream/send.js'
import { modelsOf, requestFor, scriptedNext } from '../../support/fake-send.js'

const model = modelsOf({
  upstreams: { up: { type: 'openai', baseUrl: 'https://up.example.test/v1', apiKey: 'sk-up' } },
  models: [{ id: 'm', upstream: 'up' }],
}).get('m')!

describe('outermostFirst', () => {
  it('makes the first interceptor the outermost: a call meets them in list order, its answer in reverse', async () => {
    const trace: string[] = []
    const wraps: string[] = []
    const named =
      (name: string): UpstreamInterceptor =>
      (next) => {
        wraps.push(name)
        return async (request) => {
          trace.push(`${name} >`)
          const response = await next(request)
          trace.push(`< ${name}`)
          return response
        }
      }
    const next = scriptedNext({ status: 200 }, { status: 200 })
    const send: Send = (request) => {
      trace.push('send')
      return next(request)
    }
    const wrapped = outermostFirst([named('a'), named('b'), named('c')], send)
    // Wrapped from the inside out, once.
    expect(wraps).toEqual(['c', 'b', 'a'])
    await wrapped(requestFor(model))
    await wrapped(requestFor(model))
    expect(trace).toEqual(['a >', 'b >', 'c >', 'send', '< c', '< b', '< a', 'a >', 'b >', 'c >', 'send', '< c', '< b', '< a'])
    expect(wraps).toHaveLength(3)
  })

  it('lets an outer interceptor see what an inner one changed of the request only on its way down', async () => {
    const attemptOf =
      (seen: number[]): UpstreamInterceptor =>
      (next) =>
      (request) => {
        seen.push(request.attempt)
        return next(request)
      }
    const bump: UpstreamInterceptor = (next) => (request) => next({ ...request, attempt: request.attempt + 1 })
    const outer: number[] = []
    const inner: number[] = []
    const next = scriptedNext({ status: 200 })
    await outermostFirst([attemptOf(outer), bump, attemptOf(inner)], next)(requestFor(model))
    expect(outer).toEqual([1])
    expect(inner).toEqual([2])
    expect(next.calls[0]?.attempt).toBe(2)
  })

  it('is the send itself when there is nothing to wrap it in', () => {
    const send = scriptedNext()
    expect(outermostFirst([], send)).toBe(send)
  })
})
