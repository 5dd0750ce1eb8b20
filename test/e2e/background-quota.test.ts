import { expect, it } from 'vitest'
import { bearer, KEY_A, KEY_B } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { useResponsesGateway } from '../support/responses-gateway.js'

// A background response's state counts against its owner's quota in the in-memory store, as its records do: one
// owner's large background calls never push out another owner's state.

const MB = 1000 * 1000
const MiB = 1024 * 1024

const chain = useResponsesGateway({
  auth: { apiKeys: [KEY_A, KEY_B] },
  recovery: { maxMemoryBytes: 64 * MiB, maxBytesPerOwner: 32 * MiB },
  logger: { info: () => {}, warn: () => {}, error: () => {} },
})

const create = async (key: string, input: string, controls: Record<string, unknown>) => {
  chain.mock.steer(input, controls)
  const res = await call(`${chain.server.url}/v1/responses`, {
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', input, background: true }),
  })
  expect(res.status).toBe(200)
  return (res.json as { id: string }).id
}
const retrieve = (key: string, id: string) => call(`${chain.server.url}/v1/responses/${id}`, { headers: bearer(key) })
const ended = (key: string, id: string) =>
  eventually(async () => {
    const res = await retrieve(key, id)
    const status = (res.json as { status?: string }).status
    return res.status === 404 || (status !== 'queued' && status !== 'in_progress') ? res : undefined
  }, 60_000)

it("one owner's large background calls stay within its quota and leave another owner's background response", async () => {
  const kept = await create(KEY_B, 'bg quota other owner', { chunks: 4 })
  expect((await ended(KEY_B, kept)).json).toMatchObject({ status: 'completed' })
  // Eight calls of 3 MB each: their events and final objects are four times that, past the owner's 32 MiB.
  const ids: string[] = []
  for (let i = 0; i < 8; i++) ids.push(await create(KEY_A, `bg quota burst ${i}`, { content_bytes: 3 * MB, chunks: 30 }))
  const outcomes = await Promise.all(ids.map((id) => ended(KEY_A, id)))
  const other = await retrieve(KEY_B, kept)
  expect(other.status).toBe(200)
  expect(other.json).toMatchObject({ status: 'completed' })
  // The owner past its quota has its own calls stopped, saying why.
  const failed = outcomes.filter((res) => res.status === 200 && (res.json as { status: string }).status === 'failed')
  expect(failed.length).toBeGreaterThan(0)
  const stopped = failed[0]?.json as { error: { message: string } }
  expect(stopped.error.message).toContain('recovery.maxBytesPerOwner')
}, 120_000)
