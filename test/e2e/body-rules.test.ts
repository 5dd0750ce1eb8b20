import { describe, expect, it } from 'vitest'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const PAD = 'p'.repeat(1_200_000) // past the 1 MiB mark, where bodies are scanned in slices instead of parsed at once

describe.each([
  ['a small body', ''],
  ['a body over 1 MiB', PAD],
])('request body rules, %s', (_name, pad) => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number])
  const post = (path: string, text: string) =>
    call(`${fx.url}${path}`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body: text })
  const chatText = (fields: string) => `{"messages":[{"role":"user","content":"${pad}x"}],${fields}}`

  it('refuses nesting deeper than limits.maxJsonDepth on model calls and on lookup, forwarding nothing', async () => {
    const deep = `${'['.repeat(1001)}${']'.repeat(1001)}`
    for (const path of ['/v1/chat/completions', '/v1/recoveries/lookup']) {
      const res = await post(path, chatText(`"model":"gpt-4o-mini","tools":${deep}`))
      expect(res.status).toBe(400)
      expect(res.json.error.message).toMatch(/deeper than 1000 levels \(limits\.maxJsonDepth\)/)
    }
    expect(
      (await post('/v1/chat/completions', chatText(`"model":"gpt-4o-mini","tools":${'['.repeat(990)}${']'.repeat(990)}`))).status,
    ).toBe(200)
    expect(fx.mock.requests).toHaveLength(1)
  })

  it('refuses a field the gateway reads when it appears twice, so gateway and upstream never read different ones', async () => {
    const res = await post('/v1/chat/completions', chatText('"model":"o1-pro-not-configured","model":"gpt-4o-mini"'))
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ param: 'model', message: "'model' appears more than once in the request body." })
  })

  it('refuses numbers that overflow a double instead of reading them as Infinity', async () => {
    const res = await post('/v1/chat/completions', chatText('"model":"gpt-4o-mini","temperature":1,"seed":1e400'))
    expect(res.status).toBe(400)
    expect(res.json.error.message).toMatch(/a number too large for a double at byte \d+/)
  })

  it('renames the model upstream and keeps every other byte', async () => {
    const text = chatText('"model" :  "renamed",  "temperature":0.5')
    expect((await post('/v1/chat/completions', text)).status).toBe(200)
    expect(fx.mock.requests.at(-1)?.body).toBe(text.replace('"renamed"', '"upstream-name"'))
  })
})
