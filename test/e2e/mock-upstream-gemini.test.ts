import { describe, expect, it } from 'vitest'
import { GEN, gemini, geminiFrames, post, STREAM_ARRAY, STREAM_SSE, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

describe('routes', () => {
  it('Gemini generateContent has the SPEC 2.5 shape with modelVersion from the path', async () => {
    const res = await post(GEN, gemini({}, 'hi'))
    expect(res.status).toBe(200)
    const body = res.json
    expect(body).toEqual({
      candidates: [{ content: { parts: [{ text: 'Echo: hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: expect.any(Number),
        candidatesTokenCount: expect.any(Number),
        totalTokenCount: expect.any(Number),
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: expect.any(Number) }],
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: expect.any(String),
    })
    const u = body.usageMetadata
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount)
    expect(u.promptTokensDetails[0].tokenCount).toBe(u.promptTokenCount)
  })

  it('Gemini streamGenerateContent?alt=sse sends data: frames ending in \\r\\n\\r\\n, usage and STOP on the last', async () => {
    const res = await post(STREAM_SSE, gemini())
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
    const frames = geminiFrames(res.text)
    expect(frames).toHaveLength(5)
    expect(frames.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('Echo: hello gemini')
    for (const f of frames) {
      expect(f.modelVersion).toBe('gemini-2.5-flash')
      expect(f.responseId).toBe(frames[0].responseId)
      expect(f.candidates[0].content.role).toBe('model')
    }
    for (const f of frames.slice(0, -1)) {
      expect(f).not.toHaveProperty('usageMetadata')
      expect(f.candidates[0]).not.toHaveProperty('finishReason')
    }
    const last = frames.at(-1)
    expect(last.candidates[0].finishReason).toBe('STOP')
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number) })
  })

  it('Gemini streamGenerateContent without alt=sse returns a JSON array of response objects', async () => {
    const res = await post(STREAM_ARRAY, gemini({ mock: { chunks: 3 } }))
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    const arr: any[] = res.json
    expect(Array.isArray(arr)).toBe(true)
    expect(arr).toHaveLength(3)
    expect(arr.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('Echo: hello gemini')
    expect(arr[2].usageMetadata).toBeDefined()
    expect(arr[2].candidates[0].finishReason).toBe('STOP')
  })
})
