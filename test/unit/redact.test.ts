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

  it('replaces every JSON-escaped spelling of a key, and the decoded body holds no key', () => {
    const slashed = new KeyRedaction(['sk-a/b/c-KEY'])
    const spellings = [
      '\\u0073k-a/b/c-KEY',
      '\\u0073\\u006B-a/b/c-\\u004B\\u0045\\u0059',
      'sk-a\\/b\\u002fc-KEY',
      'sk\\u002Da\\/b\\u002Fc-KE\\u0059',
      '\\u0073\\u006b\\u002d\\u0061\\u002f\\u0062\\u002f\\u0063\\u002d\\u004b\\u0045\\u0059',
    ]
    for (const spelling of spellings) {
      const body = Buffer.from(`{"error":"bad key ${spelling}!","again":"${spelling}"}`)
      expect(JSON.parse(body.toString()).again, spelling).toBe('sk-a/b/c-KEY')
      const out = slashed.whole(body).toString()
      expect(out, spelling).toBe('{"error":"bad key [redacted]!","again":"[redacted]"}')
      expect(slashed.text(spelling)).toBe('[redacted]')
    }
  })

  it('replaces a key escaped in a JSON string nested in a JSON string, keeping the outer JSON valid', () => {
    const inner = JSON.stringify({ key: '\\u0073k-upstream-0123456789' })
    const body = Buffer.from(JSON.stringify({ error: inner, odd: '\\\\\\u0073k-upstream-0123456789' }))
    const out = redaction.whole(body).toString()
    expect(out).not.toContain('0123456789')
    const decoded = JSON.parse(out)
    expect(JSON.stringify(decoded)).not.toContain(KEY)
    expect(JSON.parse(decoded.error)).toEqual({ key: '[redacted]' })
    expect(decoded.odd).toBe('\\[redacted]')
  })

  it('leaves escapes that spell something else, and near misses, untouched', () => {
    const body = Buffer.from('{"a":"\\u0073k-upstream-012345678","b":"line\\nbreak \\u00e9 \\/ sk-upstream"}')
    expect(redaction.whole(body)).toBe(body)
  })

  it('redacts an escaped key split across stream chunks at any point, inside an escape too', () => {
    const escaped = '\\u0073\\u006B-upstream\\u002D0123456789'
    const text = `data: {"echo":"${escaped}"}\n\ndata: [DONE]\n\n`
    for (let cut = 1; cut < text.length; cut++) {
      for (let second = cut + 1; second <= text.length; second += 7) {
        const stream = redaction.stream()
        const pieces = [text.slice(0, cut), text.slice(cut, second), text.slice(second)]
        const out = pieces.map((piece) => stream.chunk(Buffer.from(piece)))
        const rest = stream.flush()
        if (rest) out.push(rest)
        expect(Buffer.concat(out).toString(), `cuts at ${cut}, ${second}`).toBe('data: {"echo":"[redacted]"}\n\ndata: [DONE]\n\n')
      }
    }
  })

  it('holds back no more than an escaped key could need, and gives it back when it is none', () => {
    const stream = redaction.stream()
    expect(stream.chunk(Buffer.from('tail \\u0073\\u006')).toString()).toBe('tail ')
    expect(stream.chunk(Buffer.from('9 and more')).toString()).toBe('\\u0073\\u0069 and more')
    expect(stream.chunk(Buffer.from('text with \\n escapes!')).toString()).toBe('text with \\n escapes!')
  })

  it('is inactive without keys', () => {
    expect(new KeyRedaction([]).active).toBe(false)
    expect(new KeyRedaction(['']).active).toBe(false)
  })
})
