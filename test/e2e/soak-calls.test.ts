// The soak's client calls (soak/calls.ts) tell a cut from a failure: the soak's invariants rest on it.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { chatCall, isCut, withCut } from '../../soak/calls.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'

let mock: MockUpstream

beforeAll(async () => {
  mock = await startMockUpstream({ record: false })
})

afterAll(() => mock?.close())

it('counts a streamed chat call cut while its events are read as a cut, not as a stream the server ended early', async () => {
  // The OpenAI SDK ends the iteration of a stream whose signal aborted without an error: it looked like a stream
  // that ended cleanly without its finish chunk.
  mock.steer('soak-cut-stream', { chunks: 30, chunk_delay_ms: 40 })
  const error = await chatCall({ url: mock.url, key: 'sk-test', cutAfterMs: 300 }, 'soak-cut-stream', true).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(String(error)).not.toContain('finish reason')
  expect(isCut(error)).toBe(true)
})

it('still reports a stream read to its end as answered', async () => {
  mock.steer('soak-whole-stream', { chunks: 3 })
  await expect(chatCall({ url: mock.url, key: 'sk-test', cutAfterMs: undefined }, 'soak-whole-stream', true)).resolves.toBeUndefined()
})

it('counts an attempt that got its whole answer though its cut fired meanwhile as answered, not as a lost answer', async () => {
  // The answer reached the app as the timer fired, before the SDK looked at its signal: the cut took nothing.
  const answer = await withCut(1, async (signal) => {
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(signal.aborted).toBe(true)
    return 'whole answer'
  })
  expect(answer).toBe('whole answer')
})
