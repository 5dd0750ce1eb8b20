import { expect, it } from 'vitest'
import { bearer, KEY_A } from '../support/fixture.js'
import { call } from '../support/http.js'
import { useResponsesGateway } from '../support/responses-gateway.js'

// A background call whose whole answer came before any of its events was written, and which its owner's quota
// cannot hold, ends `failed` saying why at once: its last write, refused, is not left as a call still running (read
// as such until readers give it up, two leases later).

const MiB = 1024 * 1024

const chain = useResponsesGateway({
  auth: { apiKeys: [KEY_A] },
  recovery: { maxMemoryBytes: 16 * MiB, maxBytesPerOwner: MiB / 4 },
  logger: { info: () => {}, warn: () => {}, error: () => {} },
})

it('a call whose last write its owner quota refuses ends failed, naming the bound, not running', async () => {
  const input = 'bg quota refused at the end'
  // Its deltas and its final object hold the text twice, past the quota; a small answer comes whole within a tick.
  chain.mock.steer(input, { content_bytes: 200_000, chunks: 2 })
  const res = await call(`${chain.server.url}/v1/responses`, {
    headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', input, background: true }),
  })
  expect(res.status).toBe(200)
  const { id } = res.json as { id: string }
  const deadline = Date.now() + 5_000
  let last: { status?: string; error?: { message?: string } } = {}
  while (Date.now() < deadline) {
    const got = await call(`${chain.server.url}/v1/responses/${id}`, { headers: bearer(KEY_A) })
    expect(got.status).toBe(200)
    last = got.json as typeof last
    if (last.status !== 'queued' && last.status !== 'in_progress') break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  expect(last.status).toBe('failed')
  expect(last.error?.message).toContain('recovery.maxBytesPerOwner')
  // Its events, read again, end with the failure too: what the quota refused is not kept, nor told as done.
  const events = await call(`${chain.server.url}/v1/responses/${id}?stream=true`, { headers: bearer(KEY_A) })
  const types = [...events.text.matchAll(/^event: (.*)$/gm)].map((m) => m[1])
  expect(types[0]).toBe('response.created')
  expect(types.at(-1)).toBe('response.failed')
  expect(types).not.toContain('response.completed')
})
