import { describe, expect, it } from 'vitest'
import { call } from '../support/http.js'
import { chat, mock, openaiFrames, post, rawRequest, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

describe('routes', () => {
  it('GET /v1/models returns an OpenAI model list', async () => {
    const res = await call(`${mock.url}/v1/models`)
    expect(res.status).toBe(200)
    const body = res.json
    expect(body.object).toBe('list')
    expect(body.data.length).toBeGreaterThan(0)
    for (const m of body.data) {
      expect(m).toEqual({ id: expect.any(String), object: 'model', created: expect.any(Number), owned_by: expect.any(String) })
    }
  })

  it('non-streaming chat completion has the SPEC 2.4 shape and echoes the last user message', async () => {
    const res = await post('/v1/chat/completions', chat({}, 'ping'))
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/json')
    const body = res.json
    expect(body).toEqual({
      id: expect.stringMatching(/^chatcmpl-mock-\d+$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Echo: ping', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
      service_tier: 'default',
      system_fingerprint: null,
    })
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens)
    expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(5)
  })

  it('chat completion ids are unique per request', async () => {
    const a = (await post('/v1/chat/completions', chat())).json
    const b = (await post('/v1/chat/completions', chat())).json
    expect(a.id).not.toBe(b.id)
  })

  it('echoes array-of-parts message content', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
    })
    expect(res.json.choices[0].message.content).toBe('Echo: ab')
  })

  it('n returns that many choices', async () => {
    const body = (await post('/v1/chat/completions', chat({ n: 3 }))).json
    expect(body.choices.map((c: any) => c.index)).toEqual([0, 1, 2])
    expect(new Set(body.choices.map((c: any) => c.message.content))).toEqual(new Set(['Echo: hello world']))
  })

  it('streaming chat completion: role frame, 5 content deltas, finish frame, [DONE]', async () => {
    const res = await post('/v1/chat/completions', chat({ stream: true }))
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    const frames = openaiFrames(res.text)
    expect(frames.at(-1)).toBe('[DONE]')
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f))
    expect(chunks).toHaveLength(1 + 5 + 1)
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk')
      expect(c.id).toBe(chunks[0].id)
      expect(c.model).toBe('gpt-4o-mini')
      expect(c).not.toHaveProperty('usage')
    }
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' })
    expect(chunks[0].choices[0].finish_reason).toBeNull()
    const deltas = chunks.slice(1, 6).map((c) => c.choices[0].delta.content)
    expect(deltas.join('')).toBe('Echo: hello world')
    expect(chunks[6].choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }])
  })

  it('streaming with stream_options.include_usage ends with a usage chunk with choices: []', async () => {
    const res = await post('/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true } }))
    const frames = openaiFrames(res.text)
    expect(frames.at(-1)).toBe('[DONE]')
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f))
    const last = chunks.at(-1)
    expect(last.choices).toEqual([])
    expect(last.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) })
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens)
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull()
  })

  it('streaming usage equals non-streaming usage for the same request', async () => {
    const plain = (await post('/v1/chat/completions', chat())).json
    const res = await post('/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true } }))
    const chunks = openaiFrames(res.text)
      .slice(0, -1)
      .map((f) => JSON.parse(f))
    expect(chunks.at(-1).usage).toEqual(plain.usage)
  })

  it('streaming writes each frame separately (visible with chunk_delay_ms)', async () => {
    const { status, chunks } = await rawRequest('/v1/chat/completions', chat({ stream: true, mock: { chunks: 3, chunk_delay_ms: 30 } }))
    expect(status).toBe(200)
    // role + 3 deltas + finish + [DONE]: each arrives in its own read, 30 ms apart. Paced as a whole: one read made
    // late on a loaded machine shortens the gap after it (19 ms was seen), never the five gaps together.
    expect(chunks).toHaveLength(6)
    for (const c of chunks) expect(c.s).toMatch(/^data: .*\n\n$/s)
    expect(chunks[5]!.t - chunks[0]!.t).toBeGreaterThanOrEqual(120)
  })
})
