import { describe, expect, it } from 'vitest'
import { EventSplicer } from '../../src/client/event-splicer.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const DELIMITERS = { LF: '\n', CRLF: '\r\n', CR: '\r' } as const
type Placement = 'id inside the event' | 'id-only event after it' | 'no ids, with comments'

/** A stream of `count` data events as the gateway frames them, with line ends `eol`. */
function stream(eol: string, placement: Placement, count = 4): string {
  let out = ''
  for (let n = 1; n <= count; n++) {
    const data = `data: {"n":${n},"text":"déjà ${'x'.repeat(n * 3)}"}${eol}`
    if (placement === 'id inside the event') out += `id: ${n}${eol}${data}${eol}`
    else if (placement === 'id-only event after it') out += `${data}${eol}id: ${n}${eol}${eol}`
    else out += `: keep-alive ${n}${eol}${eol}${data}${eol}`
  }
  return `${out}data: [DONE]${eol}${eol}`
}

/** The data lines of a stream, in order: what an SDK acts on. */
const dataLines = (text: string) => text.split(/\r\n|\r|\n/).filter((line) => line.startsWith('data'))

/** Feeds `parts` in order; returns the bytes passed on after each, decoded. */
function feed(splicer: EventSplicer, parts: Uint8Array[]): string[] {
  return parts.map((part) => {
    const out = splicer.push(part)
    return out ? decoder.decode(out) : ''
  })
}

/** Whether `text` is whole events only: empty, or ending in a blank line. */
const endsAtBoundary = (text: string) => text === '' || /(\r\n\r\n|\n\n|\r\r)$/.test(text)

/** The stream after its n-th data event: what a resume with `Last-Event-ID: n` sends. */
function after(text: string, eol: string, n: number): string {
  const events = text.split(`${eol}${eol}`).slice(0, -1)
  let seen = 0
  for (let i = 0; i < events.length; i++) {
    if (seen === n)
      return events
        .slice(i)
        .map((e) => `${e}${eol}${eol}`)
        .join('')
    if (dataLines(`${events[i]}${eol}`).length > 0) seen++
  }
  return ''
}

describe('EventSplicer', () => {
  for (const [name, eol] of Object.entries(DELIMITERS)) {
    for (const placement of ['id inside the event', 'id-only event after it', 'no ids, with comments'] as const) {
      const text = stream(eol, placement)
      const bytes = encoder.encode(text)

      it(`${name}, ${placement}: passes the stream on unchanged and counts its 5 data events, split at every byte`, () => {
        for (let at = 0; at <= bytes.length; at++) {
          const splicer = new EventSplicer()
          const out =
            feed(splicer, [bytes.subarray(0, at), bytes.subarray(at)]).join('') + decoder.decode(splicer.end() ?? new Uint8Array())
          expect(out, `split at ${at}`).toBe(text)
          expect(splicer.count, `split at ${at}`).toBe(5)
        }
      })

      it(`${name}, ${placement}: byte by byte, passes on only whole events`, () => {
        const splicer = new EventSplicer()
        let passed = ''
        for (let i = 0; i < bytes.length; i++) {
          const out = splicer.push(bytes.subarray(i, i + 1))
          if (out) passed += decoder.decode(out, { stream: true })
          expect(endsAtBoundary(passed), `after byte ${i}`).toBe(true)
        }
        passed += decoder.decode(splicer.end() ?? new Uint8Array())
        expect(passed).toBe(text)
        expect(splicer.count).toBe(5)
      })

      it(`${name}, ${placement}: a cut at any byte, then the events after the count, gives every data event once`, () => {
        for (let at = 0; at <= bytes.length; at++) {
          const splicer = new EventSplicer()
          const before = decoder.decode(splicer.push(bytes.subarray(0, at)) ?? new Uint8Array())
          splicer.cut()
          expect(endsAtBoundary(before), `cut at ${at}`).toBe(true)
          expect(splicer.count, `cut at ${at}`).toBe(dataLines(before).length)
          const resumed = encoder.encode(after(text, eol, splicer.count))
          const rest = feed(splicer, [resumed]).join('') + decoder.decode(splicer.end() ?? new Uint8Array())
          expect(dataLines(before + rest), `cut at ${at}`).toEqual(dataLines(text))
          expect(splicer.count, `cut at ${at}`).toBe(5)
          // Where every event carries data, the splice is byte for byte; events without data may come twice.
          if (placement === 'id inside the event') expect(before + rest, `cut at ${at}`).toBe(text)
        }
      })
    }
  }

  for (const [name, eol] of Object.entries(DELIMITERS)) {
    for (const placement of ['id inside the event', 'id-only event after it'] as const) {
      it(`${name}, ${placement}: a cut at any byte, then the whole stream replayed, gives every data event once`, () => {
        const text = stream(eol, placement)
        const bytes = encoder.encode(text)
        for (let at = 0; at <= bytes.length; at++) {
          const splicer = new EventSplicer()
          const before = decoder.decode(splicer.push(bytes.subarray(0, at)) ?? new Uint8Array())
          splicer.cut()
          splicer.replayed()
          // The replay arrives in two pieces, split at the same place, so drops also span chunks.
          const rest =
            feed(splicer, [bytes.subarray(0, at), bytes.subarray(at)]).join('') + decoder.decode(splicer.end() ?? new Uint8Array())
          expect(dataLines(before + rest), `cut at ${at}`).toEqual(dataLines(text))
          expect(splicer.count, `cut at ${at}`).toBe(5)
          expect(endsAtBoundary(before + rest), `cut at ${at}`).toBe(true)
        }
      })
    }
  }

  it('takes a CRLF split between two chunks as one line end: no empty event in between', () => {
    const splicer = new EventSplicer()
    expect(splicer.push(encoder.encode('data: a\r'))).toBeUndefined()
    expect(splicer.push(encoder.encode('\ndata: b\r'))).toBeUndefined()
    expect(decoder.decode(splicer.push(encoder.encode('\n\r\n')))).toBe('data: a\r\ndata: b\r\n\r\n')
    expect(splicer.count).toBe(1)
  })

  it('holds an event ending in CR until the next byte, so an LF after it stays with it', () => {
    const splicer = new EventSplicer()
    expect(splicer.push(encoder.encode('data: a\r\n\r'))).toBeUndefined()
    expect(splicer.count).toBe(0)
    expect(decoder.decode(splicer.push(encoder.encode('\n')))).toBe('data: a\r\n\r\n')
    expect(splicer.count).toBe(1)
    // With CR-only line ends the next byte starts the next event.
    expect(splicer.push(encoder.encode('data: b\r\r'))).toBeUndefined()
    expect(decoder.decode(splicer.push(encoder.encode('d')))).toBe('data: b\r\r')
    expect(splicer.count).toBe(2)
  })

  it('drops an event whose CR end was not yet confirmed when the source is cut', () => {
    const splicer = new EventSplicer()
    expect(splicer.push(encoder.encode('data: a\r\n\r'))).toBeUndefined()
    splicer.cut()
    expect(splicer.count).toBe(0)
    expect(decoder.decode(splicer.push(encoder.encode('data: a\r\n\r\n')))).toBe('data: a\r\n\r\n')
    expect(splicer.count).toBe(1)
  })

  it('counts an event with a `data` field, with or without a colon, and no other', () => {
    const splicer = new EventSplicer()
    const text = 'data\n\n: comment\n\nid: 7\n\nevent: ping\nretry: 10\n\ndataX: no\n\ndat: no\n\nevent: x\ndata:{}\n\n\n\n'
    expect(decoder.decode(splicer.push(encoder.encode(text)))).toBe(text)
    expect(splicer.count).toBe(2)
  })

  it('passes on a last event without its blank line when the source ends cleanly', () => {
    const splicer = new EventSplicer()
    expect(decoder.decode(splicer.push(encoder.encode('data: a\n\ndata: b\n')))).toBe('data: a\n\n')
    expect(decoder.decode(splicer.end())).toBe('data: b\n')
    expect(splicer.count).toBe(1)
  })
})
