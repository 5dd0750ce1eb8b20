import { describe, expect, it } from 'vitest'
import { eventStreamClientFraming } from '../../src/dialects/bedrock/event-frame.js'
import { type EventFrame, EventStreamDecoder } from '../../src/dialects/bedrock/event-stream.js'

/** A framing that frames each SSE event as an event of its SSE name, and `error` events as exceptions. */
const framing = eventStreamClientFraming(({ event, data }) => {
  if (data === '[DONE]') return undefined
  return event === 'error'
    ? { kind: { exception: 'internalServerException' }, payload: data }
    : { kind: { event: event ?? 'chunk' }, payload: data }
})

/** The frames of `bytes`, read back by the gateway's own event-stream reader. */
function framesOf(bytes: Buffer): EventFrame[] {
  const frames: EventFrame[] = []
  const decoder = new EventStreamDecoder((frame) => {
    frames.push(frame)
    return ''
  }, 1 << 20)
  decoder.push(bytes)
  return frames
}

describe('the event-stream framing of Bedrock-format clients', () => {
  const sse = Buffer.from(
    'id: 1\nevent: first\ndata: {"a":1}\n\n: keep-alive\n\nevent: second\ndata: {"b":\ndata: 2}\n\ndata: [DONE]\n\nevent: error\ndata: {"message":"x"}\n\n',
  )

  it('frames each SSE event once whole, however its bytes were cut, and drops ids, comments and what the framing drops', () => {
    for (const cut of [1, 3, 7, sse.length]) {
      const writer = framing.writer?.()
      if (!writer) throw new Error('the framing has no writer')
      const out: Buffer[] = []
      for (let at = 0; at < sse.length; at += cut) out.push(writer.write(sse.subarray(at, at + cut)))
      out.push(writer.end())
      expect(framesOf(Buffer.concat(out))).toEqual([
        { messageType: 'event', type: 'first', payload: '{"a":1}' },
        { messageType: 'event', type: 'second', payload: '{"b":\n2}' },
        { messageType: 'exception', type: 'internalServerException', payload: '{"message":"x"}' },
      ])
    }
  })

  it('frames an event the stream ended inside of, and has no keep-alive', () => {
    const writer = framing.writer?.()
    expect(writer?.write(Buffer.from('event: last\ndata: {}'))).toHaveLength(0)
    expect(framesOf(writer?.end() ?? Buffer.alloc(0))).toEqual([{ messageType: 'event', type: 'last', payload: '{}' }])
    expect(framing.keepAlive).toBeUndefined()
    expect(framing.headers['content-type']).toBe('application/vnd.amazon.eventstream')
  })
})
