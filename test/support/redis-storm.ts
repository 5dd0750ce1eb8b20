import { expect } from 'vitest'
import { chatBody } from './bodies.js'
import { bearer } from './fixture.js'
import type { GatewayProcess } from './gateway-process.js'
import { call, eventually, sendThenAbort } from './http.js'

/** The client key the Redis end-to-end suites use. */
export const KEY = 'sk-e2e-owner'

/** A non-streaming chat request whose client leaves while the upstream is still working. */
export const interrupt = (gw: GatewayProcess, content: string, key = KEY, delayMs = 400) =>
  sendThenAbort(`${gw.url}/v1/chat/completions`, {
    headers: bearer(key),
    body: JSON.stringify(chatBody(content, { mock: { delay_ms: delayMs } })),
    afterMs: 30,
  })

/** A call to the Recoveries endpoints of one gateway process. */
export const recoveries = (gw: GatewayProcess, path = '', options: { method?: string; key?: string; body?: unknown } = {}) =>
  call(`${gw.url}/v1/recoveries${path}`, { method: options.method, headers: bearer(options.key ?? KEY), body: options.body })

/** Usage events the process reported: one per completed upstream call, after its record write (if any) ended. */
export const usages = (gw: GatewayProcess) => gw.events.flatMap((e) => (e.usage ? [e.usage] : []))

/** Waits until the process reported `count` usage events. */
export const waitForUsages = (gw: GatewayProcess, count: number, timeoutMs = 30_000) =>
  eventually(() => usages(gw).length >= count, timeoutMs)

/** The user message a record's request carried. */
export const contentOf = (record: { request: { body_raw: string } }): string => JSON.parse(record.request.body_raw).messages[0].content

/** Runs `work` over `items` with at most `limit` at a time. */
export async function inBatches<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (let i = 0; i < items.length; i += limit) results.push(...(await Promise.all(items.slice(i, i + limit).map(work))))
  return results
}

/**
 * 200 interruptions spread over two gateway processes on one store: exactly 200 records, each listed once and
 * readable through both, one deleted through one and gone for the other. `keyCount` counts the keys of the
 * processes' namespace in the store, which must be three per record plus the owner's catalog and its order.
 */
export async function twoProcessStorm(a: GatewayProcess, b: GatewayProcess, keyCount: () => Promise<number>): Promise<void> {
  const sent = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? { gw: a, content: `a-${i}` } : { gw: b, content: `b-${i}` }))
  await Promise.all(sent.map(({ gw, content }) => interrupt(gw, content, KEY, 1000)))
  await Promise.all([waitForUsages(a, 100, 60_000), waitForUsages(b, 100, 60_000)])
  expect([...usages(a), ...usages(b)].every((u) => u.recovered)).toBe(true)
  const writtenByA = new Set(usages(a).map((u) => u.requestId))
  const written = new Set([...writtenByA, ...usages(b).map((u) => u.requestId)])
  expect(written.size).toBe(200)

  for (const gw of [a, b]) {
    const list = await recoveries(gw)
    expect(list.status).toBe(200)
    expect(list.json.count).toBe(200)
    const ids: string[] = list.json.items.map((item: { request_id: string }) => item.request_id)
    expect(new Set(ids).size).toBe(200)
    expect(new Set(ids)).toEqual(written)
  }

  const ids = [...written]
  const reads = await inBatches(
    ids.flatMap((id) => [a, b].map((gw) => ({ id, gw }))),
    25,
    async ({ id, gw }) => ({ id, gw, res: await recoveries(gw, `/${id}`) }),
  )
  const contents = new Set<string>()
  for (const { id, gw, res } of reads) {
    expect(res.status, `GET ${id} through ${gw === a ? 'A' : 'B'}`).toBe(200)
    expect(res.json.request_id).toBe(id)
    const content = contentOf(res.json)
    expect(content.startsWith(writtenByA.has(id) ? 'a-' : 'b-')).toBe(true)
    contents.add(content)
  }
  expect(contents).toEqual(new Set(sent.map((s) => s.content)))

  const victim = [...writtenByA][0]!
  const deleted = await recoveries(b, `/${victim}`, { method: 'DELETE' })
  expect(deleted.status).toBe(200)
  expect(deleted.json.deleted).toBe(true)
  expect((await recoveries(a, `/${victim}`)).status).toBe(404)
  expect((await recoveries(a, `/${victim}`, { method: 'DELETE' })).status).toBe(404)
  const afterDelete = await recoveries(a)
  expect(afterDelete.json.count).toBe(199)
  expect(afterDelete.json.items.some((item: { request_id: string }) => item.request_id === victim)).toBe(false)
  expect(await keyCount()).toBe(199 * 3 + 2)
}
