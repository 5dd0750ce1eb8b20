import { describe, expect, it } from 'vitest'
import { ByteBudget } from '../../src/byte-budget.js'
import { openai } from '../../src/dialects/index.js'
import { SharedResponse } from '../../src/idempotency/shared-response.js'
import { StreamLog } from '../../src/recovery/stream/stream-log.js'

const HEAD = { status: 200, headers: { 'content-type': 'text/event-stream' } }

describe('SharedResponse of a resumable stream', () => {
  it("holds no copy of its own: the log's bytes are what a joiner and the kept answer get", () => {
    const held = new ByteBudget(1 << 20)
    const log = new StreamLog((event, id) => openai.numberedEvent(event, id), 1 << 20, held)
    const shared = new SharedResponse(1 << 20, held)
    shared.replayFrom(log)
    shared.open(HEAD)
    for (const text of ['data: one\n\n', 'data: two\n\n']) shared.write(log.append(Buffer.from(text)))
    // Only the log's page is taken from the total.
    const taken = held.held
    shared.write(log.append(Buffer.from('data: three\n\n')))
    expect(held.held).toBe(taken)
    shared.end()
    expect(shared.streamed()?.toString()).toBe('id: 1\ndata: one\n\nid: 2\ndata: two\n\nid: 3\ndata: three\n\n')
  })

  it('is no longer joinable, nor kept, once its log outgrew its bound', () => {
    const log = new StreamLog((event, id) => openai.numberedEvent(event, id), 40)
    const shared = new SharedResponse(1 << 20)
    shared.replayFrom(log)
    shared.open(HEAD)
    shared.write(log.append(Buffer.from('data: one\n\n')))
    expect(shared.joinable).toBe(true)
    shared.write(log.append(Buffer.from('data: a longer event than the log keeps\n\n')))
    expect(shared.joinable).toBe(false)
    shared.end()
    expect(shared.streamed()).toBeUndefined()
  })
})
