import { describe, expect, it } from 'vitest'
import { invokeFraming } from '../../src/dialects/bedrock/invoke.js'
import { clientFraming, DEFAULT_FRAMING, operationFraming, sse, upstreamAccept } from '../../src/dialects/framing/index.js'
import { DIALECTS, MODEL_ROUTES } from '../../src/dialects/index.js'

describe('stream framings', () => {
  it('frames every operation of the registry as SSE but the Bedrock formats’ (AWS event streams, no keep-alive), SSE with the comment every SSE parser skips as keep-alive', () => {
    for (const route of MODEL_ROUTES) {
      // Bedrock's client formats stream AWS event-stream frames, with no keep-alive (no reader skips a frame); its
      // token count never streams, and keeps the default.
      const streamsBedrock = route.format.operation.startsWith('bedrock.') && route.format.countsTokens !== true
      const expected = streamsBedrock ? 'aws-event-stream' : 'sse'
      expect(clientFraming(route.format).name).toBe(expected)
      expect(operationFraming(route.format.operation).name).toBe(expected)
      if (expected === 'sse') expect(clientFraming(route.format)).toBe(sse)
      else expect(clientFraming(route.format).keepAlive).toBeUndefined()
    }
    expect(operationFraming('bedrock.invoke')).toBe(invokeFraming)
    expect(invokeFraming.contentType).toBe('application/vnd.amazon.eventstream')
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
