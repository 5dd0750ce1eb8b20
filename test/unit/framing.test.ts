import { describe, expect, it } from 'vitest'
import { invokeFraming } from '../../src/dialects/bedrock/invoke.js'
import { clientFraming, DEFAULT_FRAMING, framingOfType, operationFraming, sse, upstreamAccept } from '../../src/dialects/framing/index.js'
import { DIALECTS, MODEL_ROUTES } from '../../src/dialects/index.js'

describe('stream framings', () => {
  it('frames every operation of the registry as SSE but InvokeModel (AWS event streams, no keep-alive), SSE with the comment every SSE parser skips as keep-alive', () => {
    for (const route of MODEL_ROUTES) {
      const expected = route.format.operation === 'bedrock.invoke' ? invokeFraming : sse
      expect(clientFraming(route.format)).toBe(expected)
      expect(operationFraming(route.format.operation)).toBe(expected)
    }
    expect(invokeFraming.contentType).toBe('application/vnd.amazon.eventstream')
    expect(invokeFraming.keepAlive).toBeUndefined()
    expect(framingOfType('application/vnd.amazon.eventstream')).toBe(invokeFraming)
    expect(framingOfType('text/event-stream; charset=utf-8')).toBe(sse)
    expect(DEFAULT_FRAMING).toBe(sse)
    expect(sse.headers['content-type']).toBe(sse.contentType)
    expect(String(sse.keepAlive)).toMatch(/^:[^\n]*\n\n$/)
  })

  it("takes an operation's own framing where it names one", () => {
    const lines = { name: 'json-lines', contentType: 'application/jsonl', headers: {}, keepAlive: Buffer.from('\n') }
    expect(clientFraming({ framing: lines })).toBe(lines)
  })

  it("asks an upstream for its dialect's stream framing, and for JSON when the call does not stream", () => {
    for (const dialect of DIALECTS) {
      expect(upstreamAccept(dialect.upstreamStreamAccept, true)).toBe(dialect.upstreamStreamAccept ?? sse.contentType)
      expect(upstreamAccept(dialect.upstreamStreamAccept, false)).toBe('application/json')
    }
    expect(upstreamAccept('application/vnd.amazon.eventstream', true)).toBe('application/vnd.amazon.eventstream')
  })
})
