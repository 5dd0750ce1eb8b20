import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockUpstream, type RecordedRequest, startMockUpstream } from '../../src/testing/index.js'

// The public entry `model-gateway/testing` is src/testing/index.ts: what a user of the package imports from it.
describe('model-gateway/testing', () => {
  let mock: MockUpstream
  beforeAll(async () => {
    mock = await startMockUpstream()
  })
  afterAll(() => mock.close())

  const post = (path: string, body: unknown) =>
    fetch(mock.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  it('answers an OpenAI chat completion and a Gemini generateContent, and records both', async () => {
    const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello entry' }] }
    const chat = await post('/v1/chat/completions', chatBody)
    expect(chat.status).toBe(200)
    expect(chat.headers.get('content-type')).toBe('application/json')
    const completion = await chat.json()
    expect(completion).toMatchObject({
      id: 'chatcmpl-mock-1',
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello entry' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    })

    const geminiBody = { contents: [{ role: 'user', parts: [{ text: 'hello gemini' }] }], mock: { content: 'steered' } }
    const gemini = await post('/v1beta/models/gemini-2.5-flash:generateContent', geminiBody)
    expect(gemini.status).toBe(200)
    expect(await gemini.json()).toEqual({
      candidates: [{ content: { parts: [{ text: 'steered' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: 3,
        candidatesTokenCount: 2,
        totalTokenCount: 5,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: 3 }],
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'mock-resp-2',
    })

    const recorded: RecordedRequest[] = mock.requests
    expect(recorded.map(({ method, path }) => ({ method, path }))).toEqual([
      { method: 'POST', path: '/v1/chat/completions' },
      { method: 'POST', path: '/v1beta/models/gemini-2.5-flash:generateContent' },
    ])
    expect(JSON.parse(recorded[0]!.body)).toEqual(chatBody)
    expect(JSON.parse(recorded[0]!.response)).toEqual(completion)
    expect(JSON.parse(recorded[1]!.body)).toEqual(geminiBody)
    expect(recorded[1]!.headers['content-type']).toBe('application/json')
    await mock.waitFor(() => mock.completedCalls === 2)
  })
})
