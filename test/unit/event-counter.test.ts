import { describe, expect, it } from 'vitest'
import { EventCounter } from '../../src/sse/event-counter.js'

/** The count after `text` is pushed in pieces of `size` bytes. */
function countIn(text: string, size: number): number {
  const counter = new EventCounter()
  const bytes = Buffer.from(text)
  for (let at = 0; at < bytes.length; at += size) counter.push(bytes.subarray(at, at + size))
  return counter.count
}

describe('EventCounter', () => {
  const STREAM =
    'event: response.created\ndata: {"sequence_number":0}\n\n' +
    ': a comment is no event\n\n' +
    'id: 3\n\n' +
    'event: response.in_progress\r\ndata: {"sequence_number":1}\r\n\r\n' +
    'data: {"sequence_number":2}\ndata: more\n\n' +
    'data: {"sequence_number":3}'

  it('counts the finished events that carry data, however the bytes are cut', () => {
    for (const size of [1, 2, 3, 5, 7, 64, STREAM.length]) expect(countIn(STREAM, size)).toBe(3)
    expect(countIn(`${STREAM}\n\n`, 4)).toBe(4)
  })

  it('does not take a field whose name only starts like data for one', () => {
    expect(countIn('database: x\n\ndata:x\n\n', 2)).toBe(1)
  })
})
