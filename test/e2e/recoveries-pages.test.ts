import { describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

describe('GET /v1/recoveries pages', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number])
  const list = async (query = '') => call(`${fx.url}/v1/recoveries${query}`, { headers: bearer(KEY_A) })

  it('walks the whole list in pages with limit and after, newest first, and refuses bad parameters', async () => {
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        sendThenAbort(`${fx.url}/v1/chat/completions`, {
          headers: bearer(KEY_A),
          body: JSON.stringify(chatBody(`page ${i}`, { mock: { delay_ms: 150 } })),
          afterMs: 20,
        }),
      ),
    )
    const whole = await eventually(async () => {
      const res = await list()
      return res.json.count === 5 ? res.json : undefined
    })
    expect(whole).not.toHaveProperty('has_more')
    const first = (await list('?limit=2')).json
    expect(first).toEqual({ count: 2, items: whole.items.slice(0, 2), has_more: true })
    const second = (await list(`?limit=2&after=${first.items[1].request_id}`)).json
    expect(second).toEqual({ count: 2, items: whole.items.slice(2, 4), has_more: true })
    const last = (await list(`?limit=2&after=${second.items[1].request_id}`)).json
    expect(last).toEqual({ count: 1, items: whole.items.slice(4), has_more: false })
    for (const query of ['?limit=0', '?limit=1001', '?limit=2.5', '?limit=x']) {
      const res = await list(query)
      expect(res.status, query).toBe(400)
      expect(res.json.error.param).toBe('limit')
    }
    const unknown = await list('?after=01ARZ3NDEKTSV4RRFFQ69G5FAV')
    expect(unknown.status).toBe(400)
    expect(unknown.json.error.param).toBe('after')
  })
})
