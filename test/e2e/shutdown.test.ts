import { describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, startFixture, useFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]

describe('gateway.close({ timeoutMs })', () => {
  it('aborts the calls still running once the deadline passes, then closes', async () => {
    const fx = await startFixture(NODE)
    try {
      const hanging = call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('never', { mock: { hang: true } }) })
      const stream = call(`${fx.url}/v1/chat/completions`, {
        headers: bearer(KEY_A),
        body: chatBody('endless', { stream: true, mock: { hang: true } }),
      })
      await fx.mock.waitFor(() => fx.mock.requests.length === 2)
      const started = Date.now()
      await fx.gateway.close({ timeoutMs: 200 })
      expect(Date.now() - started).toBeLessThan(3000)
      expect((await hanging).status).toBe(502)
      await stream.catch(() => undefined)
      expect(fx.logs.some((log) => log.level === 'warn' && log.message.includes('close() timed out'))).toBe(true)
    } finally {
      await fx.close()
    }
  })

  it('rejects a deadline that is not a number of milliseconds', async () => {
    const fx = await startFixture(NODE)
    await expect(fx.gateway.close({ timeoutMs: -1 })).rejects.toMatchObject({ code: 'invalid_options' })
    await fx.close()
  })
})

describe('a client that leaves a non-streaming call', () => {
  const fx = useFixture(NODE)

  it('is logged at info with the request id, for an operator to reconcile', async () => {
    await sendThenAbort(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('bye', { mock: { delay_ms: 200 } })),
      afterMs: 30,
    })
    const line = await eventually(() => fx.logs.find((log) => log.level === 'info'))
    expect(line.message).toContain('client left a non-streaming call')
    expect(line.meta?.requestId).toMatch(/^[0-9A-Z]{26}$/)
  })
})
