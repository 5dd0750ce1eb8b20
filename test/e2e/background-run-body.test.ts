import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer } from '../support/http.js'
import { serve } from '../support/servers.js'

// A large background create goes upstream as the client's own bytes with its background flag turned into a stream
// request in place: every other byte as the client sent it (its spacing, its escapes), the same length. The gateway
// edits bytes it read itself; a host's buffer is copied first and left as the host had it.

let mock: MockUpstream
let gateway: Gateway
let own: MountedServer
let host: MountedServer
/** The buffer the host server read and handed to the gateway last. */
let hostBuffer: Buffer | undefined

beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  gateway = createGateway({
    upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
    models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
    auth: { apiKeys: [KEY_A] },
  })
  own = await serve(nodeHandler(gateway))
  // A host that reads the body itself and hands its buffer over.
  host = await serve((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      hostBuffer = Buffer.concat(chunks)
      void gateway.handle(req, res, { body: { raw: hostBuffer } })
    })
  })
})

afterAll(async () => {
  await own?.close()
  await host?.close()
  await gateway?.close()
  await mock?.close()
})

/** A create of about 2 MB (scanned, not parsed whole, on the way in) with `input` to find it by upstream. */
function largeCreate(input: string): string {
  const instructions = 'Keep to the point, "quote" when asked.\n'.repeat(55_000)
  return `{ "model" : "gpt-4o-mini",\n  "background":   true , "input":${JSON.stringify(input)},"instructions":${JSON.stringify(instructions)}}`
}

/** Asserts two long texts equal, showing where they first differ rather than both whole. */
function expectSameText(got: string | undefined, want: string): void {
  let at = 0
  while (at < want.length && got?.[at] === want[at]) at++
  expect(got?.slice(Math.max(0, at - 40), at + 40)).toBe(want.slice(Math.max(0, at - 40), at + 40))
  expect(got?.length).toBe(want.length)
}

/** The member as sent turned into `"stream":true`, padded with spaces to its length. */
const asStream = (body: string, member: string) => body.replace(member, '"stream":true'.padEnd(member.length))

async function createAndRead(server: MountedServer, body: string): Promise<string> {
  const input = (JSON.parse(body) as { input: string }).input
  const res = await call(`${server.url}/v1/responses`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
  expect(res.status).toBe(200)
  expect(res.json).toMatchObject({ status: 'queued', background: true })
  const sent = await eventually(() => mock.requests.find((r) => r.body.includes(JSON.stringify(input))))
  return sent.body
}

it('sends the client its bytes with the background flag turned into a stream request, every other byte as sent', async () => {
  const body = largeCreate('bg run body own')
  const sent = await createAndRead(own, body)
  expectSameText(sent, asStream(body, '"background":   true'))
  expect(JSON.parse(sent)).toMatchObject({ stream: true, input: 'bg run body own' })
  expect(JSON.parse(sent)).not.toHaveProperty('background')
})

it("copies a host's buffer before editing it: the host's bytes stay as the client sent them", async () => {
  const body = largeCreate('bg run body host')
  const sent = await createAndRead(host, body)
  expectSameText(sent, asStream(body, '"background":   true'))
  expectSameText(hostBuffer?.toString('utf8'), body)
})

it('blanks the background member where the client asked for a stream already', async () => {
  const body = largeCreate('bg run body stream').replace('"background":   true ,', '"stream": true, "background":true,')
  const events = await call(`${own.url}/v1/responses`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
  expect(events.status).toBe(200)
  expect(events.text).toContain('event: response.completed')
  const sent = mock.requests.find((r) => r.body.includes('"bg run body stream"'))?.body
  // The last comma between two members kept stays: the one after the dropped member.
  expectSameText(sent, body.replace(', "background":true', ' '.repeat(', "background":true'.length)))
})

/** A create of about 1.8 MB (scanned on the way in) whose instructions hold escapes of every kind, and whose `tools` are big too. */
function escapedCreate(input: string): { body: string; instructions: string; tools: unknown[] } {
  const instructions = 'Line one,\n\t"quoted" \\ back\u0001slash é 🚀 \u2028\n'.repeat(30_000)
  const tools = Array.from({ length: 900 }, (_, i) => ({
    type: 'function',
    name: `tool_${i}`,
    description: 'x'.repeat(100),
    parameters: { type: 'object' },
  }))
  const body = JSON.stringify({ model: 'gpt-4o-mini', background: true, input, instructions, tools: tools })
  return { body, instructions, tools }
}

it('shows a large create whole while it runs and once cancelled, escapes and big arrays as the client sent them', async () => {
  const input = 'bg run body escaped'
  mock.steer(input, { chunks: 40, chunk_delay_ms: 50 })
  const { body, instructions, tools } = escapedCreate(input)
  expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024)
  // Too big for the body's skeleton too: made from the bytes, not parsed.
  expect(JSON.stringify(tools).length).toBeGreaterThan(64 * 1024)
  const res = await call(`${own.url}/v1/responses`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
  expect(res.status).toBe(200)
  const created = res.json as { id: string; instructions: string; tools: unknown[]; status: string }
  expect(created.status).toBe('queued')
  expect(created.instructions === instructions).toBe(true)
  expect(created.tools).toEqual(tools)
  // While it runs: the object read whole from its created event.
  const running = await eventually(async () => {
    const got = await call(`${own.url}/v1/responses/${created.id}`, { headers: bearer(KEY_A) })
    return (got.json as { status?: string }).status === 'in_progress' ? got : undefined
  })
  const shown = running.json as { instructions: string; tools: unknown[] }
  expect(shown.instructions === instructions).toBe(true)
  expect(shown.tools).toEqual(tools)
  const cancelled = await call(`${own.url}/v1/responses/${created.id}/cancel`, { method: 'POST', headers: bearer(KEY_A) })
  expect(cancelled.json).toMatchObject({ id: created.id, status: 'cancelled' })
  expect((cancelled.json as { instructions: string }).instructions === instructions).toBe(true)
  // Its events by id: the created one first, with the object the create answered with.
  const events = await call(`${own.url}/v1/responses/${created.id}?stream=true`, { headers: bearer(KEY_A) })
  const first = /^event: response\.created\ndata: ([^\n]*)\n\n/.exec(events.text)?.[1]
  expect(first === `{"type":"response.created","sequence_number":0,"response":${res.text}}`).toBe(true)
}, 60_000)
