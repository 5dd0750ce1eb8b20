import { afterAll, beforeAll, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { peakGrowth } from '../support/peak-memory.js'
import { NODE_KINDS } from '../support/servers.js'

const MiB = 1024 * 1024

let fx: Fixture
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, { limits: { maxDecodingBytes: 32 * MiB } })
})
afterAll(() => fx.close())

it('answers 502 to six concurrent gzip bombs, holding at most the decoding budget', async () => {
  const bomb = chatBody('bomb', { mock: { gzip_bomb_bytes: 64 * MiB } })
  const { result, growth } = await peakGrowth(() =>
    Promise.all(Array.from({ length: 6 }, () => call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: bomb }))),
  )
  console.log('gzip-bombs: peak array-buffer growth MiB', (growth / MiB).toFixed(1))
  for (const res of result) {
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_response_too_large')
    expect(res.json.error.message).toContain('decodes at once')
  }
  // Six bodies of 64 MiB each decoded side by side peaked at 560 MiB here; the budget is 32 MiB (78 MiB measured,
  // with zlib's and the sockets' buffers).
  expect(growth).toBeLessThan(160 * MiB)
  // The budget is given back: a plain call still passes.
  const after = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('after') })
  expect(after.status).toBe(200)
})

it('decodes a compressed answer under the budget', async () => {
  const bomb = chatBody('small bomb', { mock: { gzip_bomb_bytes: 16 * MiB } })
  const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: bomb })
  expect(res.status).toBe(200)
  expect(res.text.length).toBe(16 * MiB)
})
