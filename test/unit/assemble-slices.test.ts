import { describe, expect, it } from 'vitest'
import { assembledAnswer, assembledAnswerInSlices } from '../../src/dialects/index.js'
import { eventData, eventDataInSlices } from '../../src/sse/parse.js'
import type { CallPlan } from '../../src/translate/index.js'
import { turnsDuring } from '../support/loop-turns.js'

const PLAN: CallPlan = {
  model: 'client-model',
  upstreamModel: 'up',
  stream: true,
  includeUsage: true,
  requestId: 'req1',
  created: 1_700_000_000,
  request: {},
}
const CHUNK = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini' }

/** A chat stream of about `bytes`, as a stream log keeps it: one buffer per event, with its number. */
function bigStream(bytes: number): Buffer[] {
  const piece = 'x'.repeat(50_000)
  const events: Buffer[] = []
  for (let i = 1; i * piece.length < bytes; i++) {
    const data = JSON.stringify({ ...CHUNK, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })
    events.push(Buffer.from(`id: ${i}\ndata: ${data}\n\n`))
  }
  events.push(Buffer.from(`data: ${JSON.stringify({ ...CHUNK, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`))
  events.push(Buffer.from('data: [DONE]\n\n'))
  return events
}

describe('a large kept stream is read and assembled a slice at a time', () => {
  const events = bigStream(20 * 1024 * 1024)
  const text = Buffer.concat(events).toString('utf8')

  it('reads the events of a 20 MiB stream with turns of the event loop between slices, as eventData reads its text', async () => {
    const { result, turns } = await turnsDuring(() => eventDataInSlices(events))
    expect(result).toEqual(eventData(text))
    // One turn per MiB at least: a stall of the whole stream would be one turn.
    expect(turns).toBeGreaterThanOrEqual(15)
  })

  it('assembles it into the same answer with turns between slices', async () => {
    const data = eventData(text)
    const { result, turns } = await turnsDuring(() => assembledAnswerInSlices('chat.completions', data, PLAN))
    expect(result).toEqual(assembledAnswer('chat.completions', data, PLAN))
    expect(turns).toBeGreaterThanOrEqual(15)
  })
})
