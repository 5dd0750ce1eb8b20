import { describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

describe('DELETE /v1/recoveries takes its confirmation exactly', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number])
  const count = async () => (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json.count as number
  const deleteAll = (query: string) => call(`${fx.url}/v1/recoveries${query}`, { method: 'DELETE', headers: bearer(KEY_A) })

  it.each([
    ['?all=true&dry_run=1', 'dry_run'],
    ['?all=true&dry_run=TRUE', 'dry_run'],
    ['?all=true&dry_run=yes', 'dry_run'],
    ['?all=true&dry-run=true', 'dry-run'],
    ['?all=true&dryRun=true', 'dryRun'],
    ['?all=true&dry_run=false&dry_run=true', 'dry_run'],
    ['?all=true&all=false', 'all'],
    ['?all=true&x=1', 'x'],
  ])('refuses %s naming %s, and deletes nothing', async (query, param) => {
    const previous = await count()
    await sendThenAbort(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('keep me', { mock: { delay_ms: 150 } })),
      afterMs: 20,
    })
    await eventually(async () => (await count()) === previous + 1)
    const before = previous + 1
    const res = await deleteAll(query)
    expect(res.status).toBe(400)
    expect(res.json).toEqual({ deleted: 0, param, message: expect.stringContaining(param), reason: 'INVALID_PARAMETER' })
    expect(await count()).toBe(before)
  })

  it.each(['', '?all=TRUE', '?all=tru%65', '?all', '?dry_run=true'])(
    'asks for the confirmation on %j and deletes nothing',
    async (query) => {
      const before = await count()
      const res = await deleteAll(query)
      expect(res.status).toBe(400)
      expect(res.json).toEqual({ deleted: 0, message: expect.any(String), reason: 'CONFIRMATION_REQUIRED' })
      expect(await count()).toBe(before)
    },
  )

  it('still runs a dry run with dry_run=true and deletes with dry_run=false', async () => {
    const before = await count()
    expect(before).toBeGreaterThan(0)
    expect((await deleteAll('?all=true&dry_run=true')).json).toMatchObject({ deleted: 0, would_delete: before, reason: 'DRY_RUN' })
    expect((await deleteAll('?dry_run=false&all=true')).json).toMatchObject({ deleted: before, reason: 'OK' })
    expect(await count()).toBe(0)
  })
})
