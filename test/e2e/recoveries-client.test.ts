import { afterEach, describe, expect, expectTypeOf, it } from 'vitest'
import {
  type RecoveryRecord as ClientRecord,
  type RecoverySummary as ClientSummary,
  createRecoveriesClient,
  type RecoveriesClient,
  RecoveriesError,
} from '../../src/client/index.js'
import type { RecoveryRecord, RecoverySummary } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, KEY_B, useFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// The gateway mounted under /ai beside a host route: the client must find /v1 below the mount point.
const kind = NODE_KINDS[1]!

describe(`createRecoveriesClient against a gateway (${kind.name})`, () => {
  const fx = useFixture(kind)
  const clientFor = (apiKey: string, baseUrl = fx.url) => createRecoveriesClient({ baseUrl, apiKey })

  /** Sends a chat call the client cuts while the upstream still works on it; resolves once the upstream answered. */
  async function interrupted(body: Record<string, unknown>, key = KEY_A): Promise<void> {
    const before = fx.mock.completedCalls
    await sendThenAbort(`${fx.url}/v1/chat/completions`, { headers: bearer(key), body: JSON.stringify(body), afterMs: 30 })
    await fx.mock.waitFor(() => fx.mock.completedCalls > before)
  }

  /** Waits until the owner of `client` has `count` records, and returns them. */
  const recordsOf = (client: RecoveriesClient, count: number) =>
    eventually(async () => {
      const list = await client.list()
      return list.count === count ? list.items : undefined
    })

  afterEach(async () => {
    for (const key of [KEY_A, KEY_B]) await clientFor(key).deleteAll({ dryRun: false })
  })

  it('recover() returns the kept answer of a call whose client was cut, found by its body in any key order', async () => {
    const body = chatBody('lost on the way', { temperature: 0.3, mock: { delay_ms: 300 } })
    await interrupted(body)
    const alice = clientFor(KEY_A)
    const [summary] = await recordsOf(alice, 1)
    // The same body as its text, keys in another order and spaced otherwise.
    const text = `{ "mock": {"delay_ms": 300}, "temperature": 0.3, "messages": [{"content": "lost on the way", "role": "user"}], "model": "gpt-4o-mini" }`
    const kept = await alice.recover<{ object: string; choices: Array<{ message: { content: string } }> }>(text)
    expect(kept?.requestId).toBe(summary?.request_id)
    expect(kept?.answer.object).toBe('chat.completion')
    expect(kept?.answer.choices[0]?.message.content).toContain('lost on the way')
    expect(kept?.record.request.model).toBe('gpt-4o-mini')
    expect(kept?.record.response.status).toBe(200)
    // As an object too.
    expect((await alice.recover(body))?.requestId).toBe(summary?.request_id)
  })

  it('recover() resolves undefined when nothing is kept: an unknown body, or a call whose answer was delivered', async () => {
    const alice = clientFor(KEY_A)
    expect(await alice.recover(chatBody('never sent'))).toBeUndefined()
    const delivered = chatBody('delivered fine')
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: delivered })
    expect(res.status).toBe(200)
    expect(await alice.recover(delivered)).toBeUndefined()
  })

  it('lists (whole and in pages), looks up, gets, deletes one and deletes all (after a dry run)', async () => {
    const bodies = [1, 2, 3].map((i) => chatBody(`record ${i}`, { mock: { delay_ms: 250 } }))
    await Promise.all(bodies.map((body) => interrupted(body)))
    const alice = clientFor(KEY_A)
    const items = await recordsOf(alice, 3)
    expect(Object.keys(items[0]!).sort()).toEqual(['created_at', 'interrupted_reason', 'request_body_hash', 'request_id'])

    const first = await alice.list({ limit: 2 })
    expect(first).toEqual({ count: 2, items: items.slice(0, 2), has_more: true })
    const second = await alice.list({ limit: 2, after: first.items[1]!.request_id })
    expect(second).toEqual({ count: 1, items: items.slice(2), has_more: false })

    const found = await alice.lookup(bodies[1])
    expect(found).toHaveLength(1)
    const id = found[0]!.request_id
    const record = await alice.get(id)
    expect(record.request_id).toBe(id)
    expect(JSON.parse(record.request.body_raw)).toEqual(bodies[1])
    expect(JSON.parse(record.response.body_raw).choices[0].message.content).toContain('record 2')
    expect(record.served_again_at).toBeUndefined()

    expect(await alice.delete(id)).toEqual({ request_id: id, deleted: true, message: expect.any(String), reason: 'OK' })
    expect(await alice.delete(id)).toEqual({ request_id: id, deleted: false, message: expect.any(String), reason: 'RECOVERY_NOT_FOUND' })
    const missing = await alice.get(id).catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(RecoveriesError)
    expect(missing).toMatchObject({ status: 404, code: 'RECOVERY_NOT_FOUND', body: { request_id: id, reason: 'RECOVERY_NOT_FOUND' } })

    expect(await alice.deleteAll({ dryRun: true })).toEqual({ deleted: 0, would_delete: 2, message: expect.any(String), reason: 'DRY_RUN' })
    expect((await alice.list()).count).toBe(2)
    expect(await alice.deleteAll({ dryRun: false })).toEqual({ deleted: 2, message: expect.any(String), reason: 'OK' })
    expect(await alice.list()).toEqual({ count: 0, items: [] })
  })

  it('keeps owners apart: another key neither sees, reads, recovers nor deletes a record, and can delete-all only its own', async () => {
    const body = chatBody('only for alice', { mock: { delay_ms: 250 } })
    await interrupted(body)
    const alice = clientFor(KEY_A)
    const bob = clientFor(KEY_B)
    const [summary] = await recordsOf(alice, 1)
    const id = summary!.request_id
    expect(await bob.list()).toEqual({ count: 0, items: [] })
    expect(await bob.lookup(body)).toEqual([])
    expect(await bob.recover(body)).toBeUndefined()
    await expect(bob.get(id)).rejects.toMatchObject({ name: 'RecoveriesError', status: 404 })
    expect(await bob.delete(id)).toMatchObject({ deleted: false, reason: 'RECOVERY_NOT_FOUND' })
    expect(await bob.deleteAll({ dryRun: false })).toMatchObject({ deleted: 0 })
    expect((await alice.recover(body))?.requestId).toBe(id)
  })

  it('takes the root with a trailing /v1 or slash, sends through the given fetch, and rejects a refused key with a RecoveriesError', async () => {
    const sent: string[] = []
    const viaFetch = createRecoveriesClient({
      baseUrl: `${fx.url}/v1/`,
      apiKey: KEY_A,
      fetch: (input, init) => {
        sent.push(`${init?.method} ${String(input)}`)
        return fetch(input, init)
      },
    })
    expect(await viaFetch.list({ limit: 5 })).toEqual({ count: 0, items: [], has_more: false })
    expect(sent).toEqual([`GET ${fx.url}/v1/recoveries?limit=5`])

    const refused = await clientFor('sk-not-a-key')
      .list()
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(RecoveriesError)
    expect(refused).toMatchObject({ status: 401, code: expect.any(String), body: { error: expect.any(Object) } })
    expect(String((refused as Error).message)).toMatch(/^Recoveries API answered 401/)
    // A bad page size is the gateway's 400, carried as it came.
    await expect(clientFor(KEY_A).list({ limit: 0 })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request',
      body: { error: { param: 'limit' } },
    })
  })

  it('refuses bad options and a delete-all without an explicit dryRun before sending anything', async () => {
    const fail = (options: unknown) => () => createRecoveriesClient(options as never)
    expect(fail(undefined)).toThrow(TypeError)
    expect(fail({ baseUrl: 'not a url', apiKey: 'k' })).toThrow(/baseUrl is not a valid URL/)
    expect(fail({ baseUrl: 'ftp://x.example', apiKey: 'k' })).toThrow(/http\(s\)/)
    expect(fail({ baseUrl: 'https://x.example', apiKey: '' })).toThrow(/apiKey/)
    expect(fail({ baseUrl: 'https://x.example', apiKey: 'k', fetch: 'no' })).toThrow(/fetch/)
    let sent = 0
    const client = createRecoveriesClient({
      baseUrl: 'https://x.example',
      apiKey: 'k',
      fetch: async () => {
        sent++
        return new Response('{}')
      },
    })
    await expect(client.deleteAll(undefined as never)).rejects.toThrow(/dryRun/)
    await expect(client.deleteAll({} as never)).rejects.toThrow(/dryRun/)
    await expect(client.get('')).rejects.toThrow(/requestId/)
    await expect(client.lookup([1, 2])).rejects.toThrow(/JSON object/)
    expect(sent).toBe(0)
  })

  it("the client's record types match the gateway's", () => {
    expectTypeOf<RecoverySummary>().toEqualTypeOf<ClientSummary>()
    expectTypeOf<RecoveryRecord>().toMatchTypeOf<ClientRecord>()
  })
})
