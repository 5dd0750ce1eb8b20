import { describe, expect, it } from 'vitest'
import { REQUEST_ID_PATTERN } from '../../src/http/request-id.js'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// A path that looks like a cloud client's call but names nothing the gateway serves (a method it does not offer, a
// mistyped one) is answered 404 in that client's own error shape, as the paths the gateway serves there are: Google's
// `google.rpc` status under Vertex AI's `/v1/projects/` and `/v1beta1/projects/`, Bedrock's `{ message }` with
// `x-amzn-errortype` under `/model/`. The gateway claims those paths even where the host has the last word on others.
// Every other unknown path keeps its 404.

const VERTEX_PATHS = [
  '/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:bogus',
  '/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:bogus',
  '/v1beta1/projects/p/locations/us-central1/endpoints/e:predict',
]
const BEDROCK_PATHS = ['/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/bogus', '/model/m/invoke/extra', '/model/m']

describe.each(NODE_KINDS)('unknown cloud client paths ($name)', (kind) => {
  const fx = useFixture(kind)

  it.each(VERTEX_PATHS)('%s: 404 in google.rpc shape, whatever key header the client sends', async (path) => {
    // Claude Code and the Anthropic Vertex SDK send `x-api-key`, `@google/genai` `x-goog-api-key`.
    const sent: Array<Record<string, string>> = [{ 'x-api-key': KEY_A }, { 'x-goog-api-key': KEY_A }, bearer(KEY_A), {}]
    for (const headers of sent) {
      const res = await call(`${fx.url}${path}`, { headers, body: { contents: [] } })
      expect(res.status).toBe(404)
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
      expect(res.json).toEqual({ error: { code: 404, message: expect.stringContaining(`Unknown path ${path}.`), status: 'NOT_FOUND' } })
    }
  })

  it.each(BEDROCK_PATHS)('%s: 404 in Bedrock’s shape', async (path) => {
    const res = await call(`${fx.url}${path}`, { headers: bearer(KEY_A), body: { messages: [] } })
    expect(res.status).toBe(404)
    expect(res.headers['x-amzn-errortype']).toBe('ResourceNotFoundException')
    expect(res.headers['x-amzn-requestid']).toMatch(REQUEST_ID_PATTERN)
    expect(res.json).toEqual({ message: expect.stringContaining(`Unknown path ${path}.`) })
  })

  it('other unknown paths keep their 404: OpenAI’s shape, or the dialect the client’s headers announce', async () => {
    for (const path of ['/v1/chat/completion', '/v1/models/gpt-4o-mini:bogus', '/v1/projectsx/p', '/models/m/bogus']) {
      const res = await call(`${fx.url}${path}`, { headers: bearer(KEY_A), body: {} })
      expect(res.status, path).toBe(404)
      if (kind.unknownPath === 'host' && !path.startsWith('/v1/chat') && !path.startsWith('/v1/models')) {
        expect(res.text, path).toBe('host 404')
        continue
      }
      expect(res.json.error, path).toMatchObject({ code: 'not_found', type: 'invalid_request_error' })
      expect(res.headers['x-amzn-errortype'], path).toBeUndefined()
    }
    const gemini = await call(`${fx.url}/v1/models/gemini-2.5-flash:bogus`, { headers: { 'x-goog-api-key': KEY_A }, body: {} })
    expect(gemini.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
  })
})
