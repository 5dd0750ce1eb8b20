// The soak's client calls (soak/calls.ts) tell a cut from a failure: the soak's invariants rest on it.
import net from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { chatCall, isCut, MARKER_HEADER, preciseNow, withCut } from '../../soak/calls.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { ensureBuilt, type GatewayProcess, startGatewayProcess } from '../support/gateway-process.js'
import { eventually } from '../support/http.js'

let mock: MockUpstream
let gw: GatewayProcess

beforeAll(async () => {
  mock = await startMockUpstream({ record: false })
  await ensureBuilt()
  gw = await startGatewayProcess({ redisUrl: '', namespace: 'soak-calls', upstreamUrl: mock.url, apiKeys: ['sk-test'] })
}, 240_000)

afterAll(async () => {
  await gw?.stop()
  await mock?.close()
})

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
  const cuts: number[] = []
  const before = preciseNow()
  const answer = await withCut({ url: '', key: '', cutAfterMs: 1, onCut: (at) => cuts.push(at) }, async (signal) => {
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(signal.aborted).toBe(true)
    return 'whole answer'
  })
  expect(answer).toBe('whole answer')
  // The soak judges a cut against when a process handed the answer on: it is told when the cut fired.
  expect(cuts).toHaveLength(1)
  expect(cuts[0]).toBeGreaterThan(before)
  expect(cuts[0]).toBeLessThan(preciseNow())
})

/** Sends one marked chat call on a raw connection and resolves once the whole answer has been read. */
async function markedCall(socket: net.Socket, marker: string): Promise<void> {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi ${marker}` }] })
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer sk-test\r\ncontent-type: application/json\r\n` +
      `${MARKER_HEADER}: ${marker}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  let text = ''
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes('"finish_reason"')) {
        socket.off('data', onData)
        resolve()
      }
    }
    socket.on('data', onData)
  })
}

it('has a gateway process report a marked answer whose client then closed without another request, with when it was handed on', async () => {
  const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1')
  const before = preciseNow()
  // The first answer is followed by another request on the connection: its client read it, nothing is reported.
  await markedCall(socket, 'soak-m-read')
  await markedCall(socket, 'soak-m-last')
  socket.end()
  const reported = await eventually(() => gw.events.find((e) => e.handedOn)?.handedOn, 10_000)
  expect(reported.marker).toBe('soak-m-last')
  expect(reported.at).toBeGreaterThan(before)
  expect(reported.at).toBeLessThan(preciseNow())
  expect(gw.events.filter((e) => e.handedOn)).toHaveLength(1)
})
