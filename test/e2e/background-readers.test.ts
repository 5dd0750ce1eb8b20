import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { heldGrowth } from '../support/peak-memory.js'
import { type RawClient, rawClient } from '../support/raw-client.js'
import { useResponsesGateway } from '../support/responses-gateway.js'

// Readers of a background response's events that never read: each is paced by its socket, so forty of them hold
// a slice of the answer each, not a copy of it.

const MB = 1000 * 1000
const MiB = 1024 * 1024
const READERS = 40

const chain = useResponsesGateway({}, 0)

/** Starts a background response steered by `input`; resolves with its id. */
async function create(input: string, controls: Record<string, unknown>): Promise<string> {
  chain.mock.steer(input, controls)
  const res = await call(`${chain.server.url}/v1/responses`, {
    headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', input, background: true }),
  })
  expect(res.status).toBe(200)
  return (res.json as { id: string }).id
}

/** `READERS` clients of the call's events that take the head and then nothing more, held for a while. */
async function frozenReaders(id: string): Promise<RawClient[]> {
  const readers = Array.from({ length: READERS }, () => rawClient(chain.server.url, `/v1/responses/${id}?stream=true`, undefined, KEY_A))
  await Promise.all(readers.map((reader) => reader.readAtLeast(1)))
  for (const reader of readers) reader.socket.pause()
  // What an unpaced reader would queue, it queues at once: two seconds is plenty to see it.
  await sleep(2000)
  return readers
}

it('forty readers of a finished 12 MB response that never read hold a slice each, not a copy', async () => {
  const id = await create('bg frozen readers done', { content_bytes: 12 * MB, chunks: 200 })
  await eventually(
    async () => (await call(`${chain.server.url}/v1/responses/${id}`, { headers: bearer(KEY_A) })).json?.status === 'completed',
    30_000,
  )
  const { result: readers, arrayBuffers, heap, rss } = await heldGrowth(() => frozenReaders(id))
  console.log(
    'background-readers: finished, growth MiB: array buffers',
    (arrayBuffers / MiB).toFixed(1),
    'heap',
    (heap / MiB).toFixed(1),
    'rss',
    (rss / MiB).toFixed(1),
  )
  for (const reader of readers) reader.socket.destroy()
  // Unpaced, each reader queued the whole answer twice over (its deltas and its final object): ~24 MB, ~1 GB in all;
  // paced, what the sockets took is in the kernel, and each reader holds one slice of the answer at most.
  expect(arrayBuffers).toBeLessThan(64 * MiB)
  expect(heap).toBeLessThan(128 * MiB)
}, 120_000)

it('forty readers of a running 12 MB response that never read hold a slice each, not a copy', async () => {
  const id = await create('bg frozen readers running', { content_bytes: 12 * MB, chunks: 200, chunk_delay_ms: 10 })
  const { result: readers, arrayBuffers, heap, rss } = await heldGrowth(() => frozenReaders(id))
  console.log(
    'background-readers: running, growth MiB: array buffers',
    (arrayBuffers / MiB).toFixed(1),
    'heap',
    (heap / MiB).toFixed(1),
    'rss',
    (rss / MiB).toFixed(1),
  )
  for (const reader of readers) reader.socket.destroy()
  expect(arrayBuffers).toBeLessThan(64 * MiB)
  expect(heap).toBeLessThan(128 * MiB)
}, 120_000)
