import { describe, expect, it } from 'vitest'
import {
  chat,
  GEN,
  gemini,
  geminiFrames,
  mock,
  openaiFrames,
  post,
  postOpen,
  rawRequest,
  STREAM_SSE,
  startExtra,
  useFreshMock,
} from '../support/mock-upstream-harness.js'

useFreshMock()

describe('controls', () => {
  it('mock.delay_ms delays the response headers', async () => {
    const t0 = Date.now()
    const res = await post('/v1/chat/completions', chat({ mock: { delay_ms: 150 } }))
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
    expect(res.status).toBe(200)
  })

  it('mock.delay_ms on a stream delays the first frame', async () => {
    const t0 = Date.now()
    const { chunks } = await rawRequest('/v1/chat/completions', chat({ stream: true, mock: { delay_ms: 150 } }))
    expect(chunks[0]!.t - t0).toBeGreaterThanOrEqual(140)
  })

  it('the server delayMs option is the default delay, and mock.delay_ms overrides it', async () => {
    const slow = await startExtra({ delayMs: 150 })
    let t0 = Date.now()
    await post('/v1/chat/completions', chat(), {}, slow.url)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
    t0 = Date.now()
    await post('/v1/chat/completions', chat({ mock: { delay_ms: 0 } }), {}, slow.url)
    expect(Date.now() - t0).toBeLessThan(140)
  })

  it('mock.status with error_body answers that status and body', async () => {
    const errorBody = { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }
    const res = await post('/v1/chat/completions', chat({ mock: { status: 429, error_body: errorBody, headers: { 'retry-after': '1' } } }))
    expect(res.status).toBe(429)
    expect(res.headers['retry-after']).toBe('1')
    expect(res.json).toEqual(errorBody)
  })

  it('mock.status without error_body uses the route family error shape', async () => {
    const a = await post('/v1/chat/completions', chat({ stream: true, mock: { status: 500 } }))
    expect(a.status).toBe(500)
    expect(a.json.error).toMatchObject({ message: expect.any(String), type: 'server_error' })
    const b = await post(STREAM_SSE, gemini({ mock: { status: 503 } }))
    expect(b.status).toBe(503)
    expect(b.json.error).toEqual({ code: 503, message: expect.any(String), status: 'UNAVAILABLE' })
  })

  it('mock.chunks sets the number of content deltas (OpenAI and Gemini)', async () => {
    const a = await post('/v1/chat/completions', chat({ stream: true, mock: { chunks: 12 } }, 'a longer message to split'))
    const chunks = openaiFrames(a.text)
      .slice(0, -1)
      .map((f) => JSON.parse(f))
    const deltas = chunks.filter((c) => typeof c.choices[0]?.delta.content === 'string' && !c.choices[0].delta.role)
    expect(deltas).toHaveLength(12)
    expect(deltas.map((c) => c.choices[0].delta.content).join('')).toBe('Echo: a longer message to split')
    const b = await post(STREAM_SSE, gemini({ mock: { chunks: 2 } }))
    expect(geminiFrames(b.text)).toHaveLength(2)
  })

  it('mock.content sets the exact reply text', async () => {
    const a = (await post('/v1/chat/completions', chat({ mock: { content: 'Ünïcödé 🎉 reply' } }))).json
    expect(a.choices[0].message.content).toBe('Ünïcödé 🎉 reply')
    const res = await post(STREAM_SSE, gemini({ mock: { content: '🎉🎉🎉', chunks: 4 } }))
    const frames = geminiFrames(res.text)
    expect(frames.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('🎉🎉🎉')
  })

  it('mock.content_bytes makes a multi-MB reply of exactly that many bytes', async () => {
    const size = 3 * 1024 * 1024 + 7
    const a = (await post('/v1/chat/completions', chat({ mock: { content_bytes: size } }))).json
    expect(Buffer.byteLength(a.choices[0].message.content)).toBe(size)
    const res = await post(STREAM_SSE, gemini({ mock: { content_bytes: size } }))
    const text = geminiFrames(res.text)
      .map((f) => f.candidates[0].content.parts[0].text)
      .join('')
    expect(Buffer.byteLength(text)).toBe(size)
  })

  it('mock.usage is merged into usage (OpenAI) and usageMetadata (Gemini)', async () => {
    const a = (
      await post('/v1/chat/completions', chat({ mock: { usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } } }))
    ).json
    expect(a.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 })
    expect(a.usage.prompt_tokens_details).toEqual({ cached_tokens: 0, audio_tokens: 0 })

    const extraUsage = { thoughtsTokenCount: 7, toolUsePromptTokenCount: 3, totalTokenCount: 99 }
    const b = (await post(GEN, gemini({ mock: { usage: extraUsage } }))).json
    expect(b.usageMetadata).toMatchObject({ ...extraUsage, promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number) })

    const res = await post(STREAM_SSE, gemini({ mock: { usage: extraUsage } }))
    expect(geminiFrames(res.text).at(-1).usageMetadata).toMatchObject(extraUsage)

    const s = await post(
      '/v1/chat/completions',
      chat({ stream: true, stream_options: { include_usage: true }, mock: { usage: { prompt_tokens: 5 } } }),
    )
    const chunks = openaiFrames(s.text)
      .slice(0, -1)
      .map((f) => JSON.parse(f))
    expect(chunks.at(-1).usage.prompt_tokens).toBe(5)
  })

  it('mock.hang never answers; aborting the client frees it without counting a completed call', async () => {
    const ac = new AbortController()
    const p = post('/v1/chat/completions', chat({ mock: { hang: true } }), { signal: ac.signal })
    await mock.waitFor(() => mock.requests.length === 1)
    const settled = await Promise.race([
      p.then(
        () => 'answered',
        () => 'failed',
      ),
      new Promise((r) => setTimeout(() => r('pending'), 200)),
    ])
    expect(settled).toBe('pending')
    ac.abort()
    await expect(p).rejects.toThrow()
    await new Promise((r) => setTimeout(r, 50))
    expect(mock.completedCalls).toBe(0)
    expect(mock.abortedStreams).toBe(0) // not a stream
  })

  it('mock.destroy destroys the socket without answering', async () => {
    await expect(post('/v1/chat/completions', chat({ mock: { destroy: true } }))).rejects.toThrow()
    await expect(post(GEN, gemini({ mock: { destroy: true, delay_ms: 20 } }))).rejects.toThrow()
    expect(mock.completedCalls).toBe(0)
    expect(mock.abortedStreams).toBe(0)
    // The server keeps working afterwards.
    expect((await post('/v1/chat/completions', chat())).status).toBe(200)
  })

  it('mock.destroy_after_frames breaks a stream after that many frames', async () => {
    const res = await postOpen('/v1/chat/completions', chat({ stream: true, mock: { destroy_after_frames: 3 } }))
    expect(res.statusCode).toBe(200)
    const utf8 = new TextDecoder()
    let text = ''
    let error: unknown
    try {
      for await (const bytes of res.body) text += utf8.decode(bytes, { stream: true })
    } catch (err) {
      error = err
    }
    expect(error).toBeDefined()
    expect(text.split('\n\n').filter(Boolean)).toHaveLength(3)
    expect(text).not.toContain('[DONE]')
    expect(mock.abortedStreams).toBe(0) // the server broke it, not the client
  })

  it('requests missing model/messages (OpenAI) or contents (Gemini) answer 400', async () => {
    expect((await post('/v1/chat/completions', { messages: [] })).status).toBe(400)
    expect((await post('/v1/chat/completions', { model: 'm' })).status).toBe(400)
    expect((await post(GEN, { foo: 1 })).status).toBe(400)
  })
})
