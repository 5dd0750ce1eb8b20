import { describe, expect, it } from 'vitest'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const LIMIT = 4096
const TOO_LARGE = `The upstream response is larger than the limit of ${LIMIT} bytes.`

describe('limits.maxResponseBytes', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number], { limits: { maxResponseBytes: LIMIT } })
  const chat = (extra: Record<string, unknown>) =>
    call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('hi', extra) })

  it('answers 502 upstream_response_too_large for a chat answer over the limit, and passes one under it', async () => {
    const over = await chat({ mock: { content_bytes: 2 * LIMIT } })
    expect(over.status).toBe(502)
    expect(over.json).toEqual({ error: { message: TOO_LARGE, type: 'api_error', param: null, code: 'upstream_response_too_large' } })
    expect((await chat({ mock: { content_bytes: LIMIT / 4 } })).status).toBe(200)
  })

  it('bounds upstream error bodies too, answering in Google’s shape on generate-content', async () => {
    for (const mock of [{ content_bytes: 2 * LIMIT }, { status: 500, error_body: 'e'.repeat(2 * LIMIT) }]) {
      const res = await call(`${fx.url}${gpath(false)}`, { headers: goog(KEY_A), body: geminiBody('hi', { mock }) })
      expect(res.status).toBe(503)
      expect(res.json).toEqual({ error: { code: 503, message: TOO_LARGE, status: 'UNAVAILABLE' } })
    }
  })

  it('leaves streams alone: they are relayed, never held whole', async () => {
    const res = await chat({ stream: true, mock: { content_bytes: 2 * LIMIT } })
    expect(res.status).toBe(200)
    expect(res.text.length).toBeGreaterThan(2 * LIMIT)
  })
})
