import { describe, expect, it } from 'vitest'
import { SseReader } from '../../src/sse/reader.js'
import { EventSplitter } from '../../src/sse/split.js'

const MiB = 1 << 20
const CHUNK = 16 * 1024

/** One event of about `size` bytes (an image in one event), as an upstream sends it. */
const bigEvent = (size: number) => Buffer.from(`data: "${'A'.repeat(size)}"\n\n`)

/** The chunks a socket delivers a body in. */
function chunked(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = []
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size))
  return chunks
}

/** Every way to cut a text into three chunks, as byte buffers. */
function* threeWayCuts(text: string): Generator<Buffer[]> {
  const bytes = Buffer.from(text)
  for (let a = 0; a <= bytes.length; a++)
    for (let b = a; b <= bytes.length; b++) yield [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]
}

const splitAll = (chunks: Buffer[]) => {
  const splitter = new EventSplitter()
  const events = chunks.flatMap((chunk) => splitter.push(chunk).map(String))
  return { events, rest: splitter.rest()?.toString() }
}

const readAll = (chunks: Buffer[]) => {
  const reader = new SseReader()
  return [...chunks.flatMap((chunk) => reader.push(chunk)), ...reader.end()]
}

describe('event splitting work', () => {
  it('looks at each byte of one 20 MiB event in 16 KiB chunks a bounded number of times (splitter)', () => {
    const examined = (size: number) => {
      const event = bigEvent(size)
      const splitter = new EventSplitter()
      const events = chunked(event, CHUNK).flatMap((chunk) => splitter.push(chunk))
      expect(events.map((e) => e.length)).toEqual([event.length])
      expect(splitter.rest()).toBeUndefined()
      return { bytes: event.length, work: splitter.examined }
    }
    const half = examined(10 * MiB)
    const whole = examined(20 * MiB)
    // Scanned once and joined once; a rescan per chunk is 640 times the bytes.
    expect(whole.work).toBeLessThanOrEqual(3 * whole.bytes)
    expect(whole.work).toBeLessThanOrEqual(2.1 * half.work)
  })

  it('looks at each byte of one 20 MiB event in 16 KiB chunks a bounded number of times (translation reader)', () => {
    const examined = (size: number) => {
      const event = bigEvent(size)
      const reader = new SseReader()
      const data = chunked(event, CHUNK).flatMap((chunk) => reader.push(chunk))
      expect(data.map((d) => d.length)).toEqual([size + 2])
      expect(reader.end()).toEqual([])
      return { bytes: event.length, work: reader.examined }
    }
    const half = examined(10 * MiB)
    const whole = examined(20 * MiB)
    expect(whole.work).toBeLessThanOrEqual(3 * whole.bytes)
    expect(whole.work).toBeLessThanOrEqual(2.1 * half.work)
  })

  it('scans a chunk of many small events once, not once per event', () => {
    const chunk = Buffer.from('data: {"x":1}\n\n'.repeat(4096))
    const splitter = new EventSplitter()
    expect(splitter.push(chunk)).toHaveLength(4096)
    expect(splitter.examined).toBeLessThanOrEqual(chunk.length)
  })
})

describe('event boundaries cut across chunks', () => {
  const stream = 'data: a\n\ndata: b\r\n\r\nid: 1\ndata: c\n\n: comment\r\n\r\ndata: é\n\ndata: d'

  it('gives the same events wherever a blank line (\\n\\n or \\r\\n\\r\\n) is cut, into two or three chunks', () => {
    const whole = splitAll([Buffer.from(stream)])
    expect(whole.events).toEqual(['data: a\n\n', 'data: b\r\n\r\n', 'id: 1\ndata: c\n\n', ': comment\r\n\r\n', 'data: é\n\n'])
    expect(whole.rest).toBe('data: d')
    for (const chunks of threeWayCuts(stream)) expect(splitAll(chunks)).toEqual(whole)
  })

  it('reads the same data wherever a blank line is cut, into two or three chunks', () => {
    for (const chunks of threeWayCuts(stream)) expect(readAll(chunks)).toEqual(['a', 'b', 'c', 'é', 'd'])
  })

  it('cuts lone carriage returns (\\r\\r) the same wherever they are cut', () => {
    const text = 'data: a\r\rdata: b\n\r\rdata: c\n\n'
    const whole = splitAll([Buffer.from(text)])
    const data = readAll([Buffer.from(text)])
    for (const chunks of threeWayCuts(text)) {
      expect(splitAll(chunks)).toEqual(whole)
      expect(readAll(chunks)).toEqual(data)
    }
  })
})
