import { describe, expect, it } from 'vitest'
import { buildStreamSinks, type StreamSinkParts, type StreamTranslation } from '../../src/call/sink-stack.js'
import type { ResponseHead, ResponseSink } from '../../src/http/sink.js'
import { StreamLog } from '../../src/recovery/stream/stream-log.js'
import { KeyRedaction } from '../../src/upstream/redact.js'

const SECRET = 'sk-upstream-secret-0123456789'
const HEAD: ResponseHead = { status: 200, headers: { 'content-type': 'text/event-stream' } }
const BROKEN = 'data: {"error":"broken"}\n\n'
const LAST = 'data: {"error":"last"}\n\n'

/** A sink that notes every call it gets, as text; `pace` is what its writes answer. */
function recorder(pace = true) {
  const calls: string[] = []
  const sink: ResponseSink = {
    complete: (_head, body) => calls.push(`complete ${body}`),
    open: (head) => calls.push(`open ${head.status}`),
    write: (chunk) => {
      calls.push(chunk.toString())
      return pace
    },
    end: () => calls.push('end'),
    abort: () => calls.push('abort'),
  }
  return { sink, calls, written: () => calls.filter((call) => !/^(open \d+|end|abort)$/.test(call)).join('') }
}

/** A translator that renames the upstream's field to the client's, event by event, and notes what it was given. */
function translator() {
  const given: string[] = []
  let pending = ''
  const translation = {
    write: (chunk: Buffer | string) => {
      given.push(chunk.toString())
      pending += chunk.toString()
      const whole = pending.slice(0, pending.lastIndexOf('\n\n') + 2)
      pending = pending.slice(whole.length)
      return whole.replaceAll('"upstream"', '"client"')
    },
    end: () => 'data: [DONE]\n\n',
    fail: (status: number, message: string) => `data: {"failed":${status},"message":"${message}"}\n\n`,
  } as unknown as StreamTranslation
  return { translation, given }
}

/** A resumable stream's log, numbering events as the OpenAI format does. */
const streamLog = () => new StreamLog((event, id) => Buffer.concat([Buffer.from(`id: ${id}\n`), event]), 1 << 20)

/** The whole stack, every part present unless `omit` names it. */
function stack(omit: Array<'resumable' | 'translation' | 'tail' | 'redaction'> = [], clientPace = true) {
  const client = recorder(clientPace)
  const sharer = recorder()
  const tail = recorder()
  const log = streamLog()
  const { translation, given } = translator()
  const parts: StreamSinkParts = {
    client: client.sink,
    sharers: [sharer.sink],
    brokenEvent: () => Buffer.from(BROKEN),
    ...(omit.includes('resumable') ? {} : { resumable: { log, lastEvent: () => Buffer.from(LAST) } }),
    ...(omit.includes('translation') ? {} : { translation }),
    ...(omit.includes('tail') ? {} : { tail: tail.sink }),
    ...(omit.includes('redaction') ? {} : { redaction: new KeyRedaction([SECRET]) }),
  }
  return { sink: buildStreamSinks(parts), client, sharer, tail, log, given }
}

const text = (log: StreamLog) => [...log.events()].map((event) => event.bytes.toString())

describe('the stream sink stack', () => {
  it('redacts first: the tail, the translator, the log and the client never hold a key, even one split across chunks', () => {
    const s = stack()
    s.sink.open(HEAD)
    s.sink.write(Buffer.from(`data: {"upstream":"echo ${SECRET.slice(0, 10)}`))
    s.sink.write(Buffer.from(`${SECRET.slice(10)}"}\n\n`))
    s.sink.end()
    const upstream = 'data: {"upstream":"echo [redacted]"}\n\n'
    expect(s.given.join('')).toBe(upstream)
    expect(s.tail.written()).toBe(upstream)
    expect(s.client.written()).toBe('id: 1\ndata: {"client":"echo [redacted]"}\n\nid: 2\ndata: [DONE]\n\n')
    for (const seen of [s.given.join(''), s.tail.written(), s.client.written(), ...text(s.log)]) expect(seen).not.toContain(SECRET)
  })

  it("lets the tail read the upstream's own bytes, before translation and numbering", () => {
    const s = stack()
    s.sink.open(HEAD)
    s.sink.write(Buffer.from('data: {"upstream":1}\n\ndata: {"upstream":2}\n\n'))
    s.sink.end()
    expect(s.tail.calls).toEqual(['open 200', 'data: {"upstream":1}\n\ndata: {"upstream":2}\n\n', 'end'])
  })

  it("numbers in the client's format, after translation: the translator gets no ids, the log keeps what the client got", () => {
    const s = stack()
    s.sink.open(HEAD)
    s.sink.write(Buffer.from('data: {"upstream":1}\n\ndata: {"upst'))
    s.sink.write(Buffer.from('ream":2}\n\n'))
    s.sink.end()
    expect(s.given).toEqual(['data: {"upstream":1}\n\ndata: {"upst', 'ream":2}\n\n'])
    expect(text(s.log)).toEqual(['id: 1\ndata: {"client":1}\n\n', 'id: 2\ndata: {"client":2}\n\n', 'id: 3\ndata: [DONE]\n\n'])
    expect(s.client.written()).toBe(text(s.log).join(''))
    expect(s.log.head).toEqual(HEAD)
    expect(s.log.ended).toBe(true)
  })

  it("gives whoever shares the answer the client's very bytes, and lets the client alone set the pace", () => {
    const s = stack([], false)
    s.sink.open(HEAD)
    expect(s.sink.write(Buffer.from('data: {"upstream":1}\n\n'))).toBe(false)
    s.sink.end()
    expect(s.sharer.calls).toEqual(s.client.calls)
    expect(s.client.calls).toEqual(['open 200', 'id: 1\ndata: {"client":1}\n\n', 'id: 2\ndata: [DONE]\n\n', 'end'])

    const paced = stack(['resumable', 'translation', 'tail', 'redaction'], false)
    paced.sink.open(HEAD)
    expect(paced.sink.write(Buffer.from('data: 1\n\n'))).toBe(false)
    expect(paced.sharer.calls).toEqual(['open 200', 'data: 1\n\n'])
  })
})

describe('a stream the upstream broke off', () => {
  it('ends a plain passthrough with one error event after a blank line, and ends it rather than cutting it', () => {
    const s = stack(['resumable', 'translation'])
    s.sink.open(HEAD)
    s.sink.write(Buffer.from('data: {"upstream":1}\n\ndata: {"up'))
    s.sink.abort(new Error('other side closed'))
    expect(s.client.calls).toEqual(['open 200', 'data: {"upstream":1}\n\ndata: {"up', '\n\n', BROKEN, 'end'])
    expect(s.sharer.calls).toEqual(s.client.calls)
    // The tail hears of the break as it is: it reads usage, not what the client is told.
    expect(s.tail.calls).toEqual(['open 200', 'data: {"upstream":1}\n\ndata: {"up', 'abort'])
  })

  it('shows what the client got to the error event that is numbered after it, before that event is made', () => {
    const seenBefore: string[] = []
    const seen: string[] = []
    const client = recorder()
    const sink = buildStreamSinks({
      client: client.sink,
      sharers: [],
      brokenEvent: () => {
        seenBefore.push(seen.join(''))
        return Buffer.from(BROKEN)
      },
      seen: (chunk) => seen.push(chunk.toString()),
    })
    sink.open(HEAD)
    sink.write(Buffer.from('data: 1\n\ndata: 2'))
    sink.abort(new Error('other side closed'))
    // The cut event was closed for the client before the error event was made: it counts as one the client got.
    expect(seenBefore).toEqual(['data: 1\n\ndata: 2\n\n'])
    expect(client.written()).toBe(`data: 1\n\ndata: 2\n\n${BROKEN}`)
  })

  it('shows a resumable stream its events as numbered, and a translated one nothing (its translator numbers its own)', () => {
    const seen: string[] = []
    const log = streamLog()
    const resumable = buildStreamSinks({
      client: recorder().sink,
      sharers: [],
      brokenEvent: () => Buffer.from(BROKEN),
      resumable: { log, lastEvent: () => Buffer.from(LAST) },
      seen: (chunk) => seen.push(chunk.toString()),
    })
    resumable.open(HEAD)
    resumable.write(Buffer.from('data: 1\n\n'))
    expect(seen).toEqual(['id: 1\ndata: 1\n\n'])
    const translated = stack(['resumable'])
    const untouched: string[] = []
    const sink = buildStreamSinks({
      client: translated.client.sink,
      sharers: [],
      brokenEvent: () => Buffer.from(BROKEN),
      translation: translator().translation,
      seen: (chunk) => untouched.push(chunk.toString()),
    })
    sink.open(HEAD)
    sink.write(Buffer.from('data: {"upstream":1}\n\n'))
    expect(untouched).toEqual([])
  })

  it("ends a translated plain stream with the translator's error event only", () => {
    const s = stack(['resumable'])
    s.sink.open(HEAD)
    s.sink.write(Buffer.from('data: {"upstream":1}\n\n'))
    s.sink.abort(new Error('other side closed'))
    expect(s.client.calls).toEqual([
      'open 200',
      'data: {"client":1}\n\n',
      'data: {"failed":502,"message":"The upstream stream broke off before its end."}\n\n',
      'end',
    ])
  })

  it('ends a resumable stream with its last event, numbered and logged, in place of the unfinished one', () => {
    const s = stack(['translation'])
    s.sink.open(HEAD)
    s.sink.write(Buffer.from('data: {"upstream":1}\n\ndata: {"ups'))
    s.sink.abort(new Error('other side closed'))
    expect(s.client.calls).toEqual(['open 200', 'id: 1\ndata: {"upstream":1}\n\n', `id: 2\n${LAST}`, 'end'])
    expect(text(s.log)).toEqual(['id: 1\ndata: {"upstream":1}\n\n', `id: 2\n${LAST}`])
    expect(s.log.ended).toBe(true)
  })

  it("ends a translated resumable stream with the translator's error event, numbered and logged like any other", () => {
    const s = stack()
    s.sink.open(HEAD)
    s.sink.write(Buffer.from('data: {"upstream":1}\n\n'))
    s.sink.abort(new Error('other side closed'))
    expect(text(s.log)).toEqual([
      'id: 1\ndata: {"client":1}\n\n',
      'id: 2\ndata: {"failed":502,"message":"The upstream stream broke off before its end."}\n\n',
    ])
    expect(s.client.calls.at(-1)).toBe('end')
  })
})
