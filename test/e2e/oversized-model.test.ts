import { expect, it } from 'vitest'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number])

it('answers a megabyte chat body whose model name is 100 KB with a 400 on model, never a stand-in', async () => {
  const body = JSON.stringify({ model: 'm'.repeat(100_000), messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }] })
  const res = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
  expect(res.status).toBe(400)
  expect(res.json.error).toMatchObject({ param: 'model', message: "'model' is longer than 65536 bytes." })
  expect(fx.mock.requests).toHaveLength(0)
})
