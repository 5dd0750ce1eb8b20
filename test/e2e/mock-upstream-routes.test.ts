// The mock upstream routes model calls by the registry's route patterns: every path a dialect serves its clients on
// is a path the mock answers as the provider, with no branch of its own in the mock's router.
import { describe, expect, it } from 'vitest'
import { MODEL_ROUTES } from '../../src/dialects/index.js'
import { mock, post, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

/** A route pattern with every parameter filled in: a path a client of its dialect could call. */
const pathOf = (pattern: string): string => pattern.replace(/\{[^}]+\}/g, 'model-1')

describe('mock upstream routing', () => {
  it.each(MODEL_ROUTES.map((route) => [route.path]))('answers POST %s as a call, never as an unknown path', async (pattern) => {
    const res = await post(pathOf(pattern), {})
    expect(mock.requests).toHaveLength(1)
    expect(res.status, res.text).not.toBe(404)
  })

  it("answers Gemini's /v1 alias of generateContent, a route the registry gives Gemini's clients beside /v1beta", async () => {
    const alias = MODEL_ROUTES.find((route) => route.path.startsWith('/v1/models/') && route.path.endsWith(':generateContent'))
    expect(alias).toBeDefined()
    const res = await post(pathOf(alias?.path ?? ''), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
    expect(res.status).toBe(200)
    expect(res.json.candidates[0].content.parts[0].text).toBe('Echo: hi')
  })
})
