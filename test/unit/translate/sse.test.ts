import { describe, expect, it } from 'vitest'
import { SseReader } from '../../../src/sse/reader.js'
import { sseEvent } from '../../../src/sse/write.js'

describe('SseReader', () => {
  it('gives each event once it is complete, whatever the chunking', () => {
    const text = 'data: {"a":1}\n\ndata: {"b":"é"}\r\n\r\n: comment\n\ndata: [DONE]\n\n'
    const bytes = Buffer.from(text)
    for (let size = 1; size <= bytes.length; size++) {
      const reader = new SseReader()
      const got: string[] = []
      for (let i = 0; i < bytes.length; i += size) got.push(...reader.push(bytes.subarray(i, i + size)))
      got.push(...reader.end())
      expect(got).toEqual(['{"a":1}', '{"b":"é"}', '[DONE]'])
    }
  })

  it('holds an unfinished event until its blank line, and gives it at the end when there is none', () => {
    const reader = new SseReader()
    expect(reader.push('data: {"x"')).toEqual([])
    expect(reader.push(':1}\n')).toEqual([])
    expect(reader.end()).toEqual(['{"x":1}'])
  })

  it('joins multi-line data with a line feed', () => {
    expect(new SseReader().push('data: a\ndata: b\n\n')).toEqual(['a\nb'])
  })
})

describe('sseEvent', () => {
  it('writes one data event that reads back as the same payload', () => {
    expect(sseEvent('{"a":1}')).toBe('data: {"a":1}\n\n')
    const reader = new SseReader()
    expect(reader.push(sseEvent('line one\nline two'))).toEqual(['line one\nline two'])
  })

  it('names the event when given a name, as typed streams (Responses) have them', () => {
    expect(sseEvent('{"type":"response.created"}', 'response.created')).toBe(
      'event: response.created\ndata: {"type":"response.created"}\n\n',
    )
    expect(new SseReader().push(sseEvent('{"a":1}', 'x'))).toEqual(['{"a":1}'])
  })
})
