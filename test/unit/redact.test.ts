import { describe, expect, it } from 'vitest'
import { KeyRedaction } from '../../src/upstream/redact.js'

const KEY = 'sk-upstream-0123456789'
const OTHER = 'AIzaSyOther-key-42'

describe('KeyRedaction', () => {
  const redaction = new KeyRedaction([KEY, OTHER, KEY])

  it('replaces every key in a whole body, and hands back the same buffer when there is none', () => {
    const body = Buffer.from(`{"error":"bad key ${KEY}; also ${OTHER} and ${KEY}"}`)
    expect(redaction.whole(body).toString()).toBe('{"error":"bad key [redacted]; also [redacted] and [redacted]"}')
    const clean = Buffer.from('{"ok":true}')
    expect(redaction.whole(clean)).toBe(clean)
    expect(redaction.text(`Bearer ${KEY}`)).toBe('Bearer [redacted]')
  })

  it('redacts a key split across stream chunks at any point, holding back only what could start a key', () => {
    const text = `data: {"echo":"${KEY}"}\n\ndata: [DONE]\n\n`
    for (let cut = 1; cut < text.length; cut++) {
      const stream = redaction.stream()
      const out = [stream.chunk(Buffer.from(text.slice(0, cut))), stream.chunk(Buffer.from(text.slice(cut)))]
      const rest = stream.flush()
      if (rest) out.push(rest)
      expect(Buffer.concat(out).toString(), `cut at ${cut}`).toBe('data: {"echo":"[redacted]"}\n\ndata: [DONE]\n\n')
    }
  })

  it('lets a chunk that cannot start a key through whole, at once', () => {
    const stream = redaction.stream()
    const chunk = Buffer.from('data: {"delta":"hello"}\n\n')
    expect(stream.chunk(chunk).toString()).toBe(chunk.toString())
    expect(stream.flush()).toBeUndefined()
  })

  it('gives back held bytes that turned out not to be a key', () => {
    const stream = redaction.stream()
    expect(stream.chunk(Buffer.from('tail sk-up')).toString()).toBe('tail ')
    expect(stream.chunk(Buffer.from('side')).toString()).toBe('sk-upside')
  })

  it('is inactive without keys', () => {
    expect(new KeyRedaction([]).active).toBe(false)
    expect(new KeyRedaction(['']).active).toBe(false)
  })
})
