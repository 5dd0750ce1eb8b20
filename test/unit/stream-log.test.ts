import { describe, expect, it } from 'vitest'
import { ByteBudget } from '../../src/byte-budget.js'
import { gemini, openai } from '../../src/dialects/index.js'
import { splitEvents } from '../../src/recovery/stream/events.js'
import { type LoggedEvent, StreamLog } from '../../src/recovery/stream/stream-log.js'
import { EventSplitter } from '../../src/sse/split.js'

const text = (buffers: Buffer[]) => buffers.map((b) => b.toString()).join('|')

describe('EventSplitter', () => {
  it('returns whole events only, however the bytes are cut, with their blank lines', () => {
    const stream = 'data: a\n\ndata: b\r\n\r\n: comment\n\ndata: c\n\n'
    for (let cut = 1; cut < stream.length; cut++) {
      const splitter = new EventSplitter()
      const events = [...splitter.push(Buffer.from(stream.slice(0, cut))), ...splitter.push(Buffer.from(stream.slice(cut)))]
      expect(text(events)).toBe('data: a\n\n|data: b\r\n\r\n|: comment\n\n|data: c\n\n')
      expect(splitter.rest()).toBeUndefined()
    }
  })

  it('keeps an unfinished event as the rest, and splits a whole text with it', () => {
    const splitter = new EventSplitter()
    expect(text(splitter.push(Buffer.from('data: a\n\ndata: b')))).toBe('data: a\n\n')
    expect(splitter.rest()?.toString()).toBe('data: b')
    expect(text(splitEvents(Buffer.from('data: a\n\ndata: b')))).toBe('data: a\n\n|data: b')
  })
})

describe('StreamLog', () => {
  const events = ['data: one\n\n', ': keep-alive\n\n', 'data: two\n\n', 'data: three\n\n']

  it('numbers data events where each format puts the id, and leaves other events as they are', () => {
    const chat = new StreamLog((event, id) => openai.numberedEvent(event, id), 1 << 20)
    expect(events.map((e) => chat.append(Buffer.from(e)).toString())).toEqual([
      'id: 1\ndata: one\n\n',
      ': keep-alive\n\n',
      'id: 2\ndata: two\n\n',
      'id: 3\ndata: three\n\n',
    ])
    const google = new StreamLog((event, id) => gemini.numberedEvent(event, id), 1 << 20)
    // The Google GenAI SDK skips events that do not start with data: the id is an event of its own.
    expect(google.append(Buffer.from('data: one\r\n\r\n')).toString()).toBe('data: one\r\n\r\nid: 1\n\n')
  })

  it('follows from after an event number: the kept events, then live ones, then the end', () => {
    const log = new StreamLog((event, id) => openai.numberedEvent(event, id), 1 << 20)
    for (const e of events.slice(0, 3)) log.append(Buffer.from(e))
    const seen: number[] = []
    let ended = false
    log.follow(1, { event: (e: LoggedEvent) => seen.push(e.id), end: () => (ended = true) })
    log.append(Buffer.from(events[3] as string))
    log.end()
    // An event without data belongs with the data event before it (a Google id event does): after 1, it is not sent.
    expect(seen).toEqual([2, 3])
    expect(ended).toBe(true)
    expect(log.text()).toBe('id: 1\ndata: one\n\n: keep-alive\n\nid: 2\ndata: two\n\nid: 3\ndata: three\n\n')
  })

  it('keeps nothing past its byte bound and can then no longer be followed', () => {
    const log = new StreamLog((event, id) => openai.numberedEvent(event, id), 30)
    log.append(Buffer.from('data: one\n\n'))
    expect([...log.events()]).toHaveLength(1)
    log.append(Buffer.from('data: a longer event that does not fit\n\n'))
    expect(log.kept).toBe(false)
    expect([...log.events()]).toHaveLength(0)
    expect(log.follow(0, { event: () => {}, end: () => {} })).toBeUndefined()
  })
})

describe('StreamLog pages', () => {
  const numbered = (event: Buffer, id: number) => openai.numberedEvent(event, id)
  const event = (n: number, size = 100) => Buffer.from(`data: ${String(n).padEnd(size, '.')}\n\n`)

  it('keeps many events in a few pages, whole events each, and hands them back as relayed', () => {
    const log = new StreamLog(numbered, 1 << 30)
    const relayed = Array.from({ length: 5000 }, (_, n) => Buffer.from(log.append(event(n))))
    const kept = [...log.events()]
    expect(kept.map((e) => e.id)).toEqual(relayed.map((_, n) => n + 1))
    expect(kept.map((e) => e.bytes.toString())).toEqual(relayed.map((b) => b.toString()))
    const chunks = log.chunks()
    // 5000 events of about 110 bytes: 550 KB in pages of up to 64 KiB, not 5000 buffers.
    expect(chunks.length).toBeLessThan(20)
    expect(Buffer.concat(chunks).toString()).toBe(relayed.map((b) => b.toString()).join(''))
    expect(log.bytes).toBe(Buffer.concat(chunks).length)
  })

  it('gives an event larger than a page a page of its own, between smaller ones', () => {
    const log = new StreamLog(numbered, 1 << 30)
    const sizes = [10, 200_000, 10, 70_000, 10]
    const relayed = sizes.map((size, n) => log.append(event(n, size)).toString())
    expect([...log.events()].map((e) => e.bytes.toString())).toEqual(relayed)
    expect(Buffer.concat(log.chunks()).toString()).toBe(relayed.join(''))
  })

  it('takes its pages from the shared total and gives them all back when released', () => {
    const held = new ByteBudget(1 << 20)
    const log = new StreamLog(numbered, 1 << 20, held)
    for (let n = 0; n < 2000; n++) log.append(event(n))
    // What the pages take, a little more than the events' bytes (the unused end of the last page).
    expect(held.held).toBeGreaterThanOrEqual(log.bytes)
    expect(held.held).toBeLessThan(log.bytes + 64 * 1024)
    log.release()
    expect(held.held).toBe(0)
    expect(log.kept).toBe(false)
  })

  it('stops keeping when the shared total is spent, and gives back what it took', () => {
    const held = new ByteBudget(100 * 1024)
    const log = new StreamLog(numbered, 1 << 30, held)
    let overflowed = 0
    log.onOverflow(() => overflowed++)
    for (let n = 0; n < 2000; n++) log.append(event(n))
    expect(overflowed).toBe(1)
    expect(log.kept).toBe(false)
    expect(held.held).toBe(0)
  })

  it('follows across pages from any event number', () => {
    const log = new StreamLog(numbered, 1 << 30)
    for (let n = 0; n < 3000; n++) log.append(event(n))
    const seen: number[] = []
    log.follow(2990, { event: (e: LoggedEvent) => seen.push(e.id), end: () => {} })
    expect(seen).toEqual([2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999, 3000])
  })
})
