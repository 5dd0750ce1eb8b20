import { createHook } from 'node:async_hooks'
import OpenAI from 'openai'
import { Pool } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, open } from '../support/http.js'
import { type Chain, CLAUDE, chatBody, GEMINI, KEEP_ALIVE, startChain, useChain } from '../support/keep-alive-chain.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { cutAfterEvents, dataEvents } from '../support/sse-client.js'

describe('an upstream error after the keep-alive commit: a 200 stream ending with the dialect’s error event', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 } })
  const message = 'Mock upstream error (status 429).'
  const errorCases: Array<{
    name: string
    path: string
    headers: Record<string, string>
    body: (marker: string) => unknown
    event: (requestId: string) => string
  }> = [
    {
      name: 'chat completions',
      path: '/v1/chat/completions',
      headers: bearer(KEY_A),
      body: (marker: string) => chatBody(marker),
      event: () => `data: {"error":{"message":"${message}","type":"invalid_request_error","param":null,"code":"upstream_error"}}\n\n`,
    },
    {
      name: 'Responses',
      path: '/v1/responses',
      headers: bearer(KEY_A),
      body: (marker: string) => ({ model: 'gpt', input: marker, stream: true }),
      event: () =>
        `event: error\ndata: {"type":"error","code":"upstream_error","message":"${message}","param":null,"sequence_number":0}\n\n`,
    },
    {
      name: 'generate content',
      path: `/v1beta/models/${GEMINI}:streamGenerateContent?alt=sse`,
      headers: { 'x-goog-api-key': KEY_A },
      body: (marker: string) => ({ contents: [{ role: 'user', parts: [{ text: marker }] }] }),
      event: () => `data: {"error":{"code":429,"message":"${message}","status":"RESOURCE_EXHAUSTED"}}\n\n`,
    },
    {
      name: 'Messages',
      path: '/v1/messages',
      headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
      body: (marker: string) => ({ model: CLAUDE, max_tokens: 16, messages: [{ role: 'user', content: marker }], stream: true }),
      event: (requestId: string) =>
        `event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"${message}"},"request_id":"${requestId}"}\n\n`,
    },
    {
      name: 'Messages translated to an OpenAI upstream',
      path: '/v1/messages',
      headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
      body: (marker: string) => ({ model: 'gpt', max_tokens: 16, messages: [{ role: 'user', content: marker }], stream: true }),
      event: (requestId: string) =>
        `event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"${message}"},"request_id":"${requestId}"}\n\n`,
    },
  ]

  for (const c of errorCases) {
    it(`${c.name}: an upstream 429 after keep-alives`, async () => {
      const marker = `late 429 ${c.name}`
      chain.mock.steer(marker, { delay_ms: 300, status: 429 })
      const res = await call(`${chain.url}${c.path}`, { headers: c.headers, body: c.body(marker) })
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('text/event-stream')
      const requestId = String(res.headers['x-request-id'])
      expect(res.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
      expect(res.text.split(KEEP_ALIVE).join('')).toBe(c.event(requestId))
    })
  }

  it('an upstream that cannot be reached after keep-alives: the error event names it, and the SDK raises it', async () => {
    chain.mock.steer('late reset', { delay_ms: 300, destroy: true })
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('late reset') })
    expect(res.status).toBe(200)
    expect(res.text.split(KEEP_ALIVE).join('')).toBe(
      'data: {"error":{"message":"The upstream model could not be reached.","type":"api_error","param":null,"code":"upstream_unreachable"}}\n\n',
    )
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0 })
    const run = async () => {
      for await (const _ of await client.chat.completions.create(Object.assign(chatBody('late reset'), { stream: true as const }))) {
        // Nothing comes before the error.
      }
    }
    await expect(run()).rejects.toThrow(/could not be reached/)
  })

  it('an error before the first keep-alive is still answered with its status', async () => {
    chain.mock.steer('early 429', { status: 429 })
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('early 429') })
    expect(res.status).toBe(429)
    expect(res.text).not.toContain(': keep-alive')
  })
})

describe('resumes and records', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 }, recovery: { streams: 'finish' } })

  it('a resume that follows the live call gets keep-alives; the kept record and the numbering have none', async () => {
    chain.mock.steer('followed', { chunks: 4, chunk_delay_ms: 250 })
    const cut = await cutAfterEvents(`${chain.url}/v1/chat/completions`, bearer(KEY_A), chatBody('followed'), 1)
    expect(cut.seen).toBe(1)
    const resumed = await call(`${chain.url}/v1/recoveries/${cut.requestId}/stream`, {
      headers: { ...bearer(KEY_A), 'last-event-id': '1' },
    })
    expect(resumed.status).toBe(200)
    expect(resumed.text).toContain(KEEP_ALIVE)
    const events = resumed.text.split(KEEP_ALIVE).join('')
    // Numbered on from the cut, one number per data event: the comments took none.
    expect([...events.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([2, 3, 4, 5, 6, 7])
    const record = await eventually(async () => {
      const got = await call(`${chain.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return got.status === 200 ? got.json : undefined
    })
    const kept = record.response.stream_raw as string
    expect(kept).not.toContain('keep-alive')
    expect(dataEvents(kept)).toBe(7)
  })
})

describe('a keep-alive never lands inside an event', () => {
  let scripted: ScriptedUpstream
  let chain: Chain
  beforeAll(async () => {
    scripted = await startScriptedUpstream()
    chain = await startChain({ keepAlive: { streamMs: 50 } }, scripted)
  })
  afterAll(async () => {
    await chain.close()
    await scripted.close()
  })

  it('an upstream quiet in the middle of an event gets no comment until the event is whole', async () => {
    const event = 'data: {"choices":[{"index":0,"delta":{"content":"whole"}}]}\n\n'
    const pieces = [event.slice(0, 20), event.slice(20), 'data: [DONE]\n\n']
    scripted.script(
      pieces.map((piece) => Buffer.from(piece)),
      { gated: true },
    )
    scripted.release()
    const cut = await open(`${chain.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      // Usage asked for by the client: its stream is relayed as the upstream's bytes, not taken apart to strip usage.
      body: chatBody('cut event', { model: 'scripted', stream_options: { include_usage: true } }),
    })
    let text = ''
    const ended = new Promise<void>((resolve) => {
      cut.body.on('data', (chunk: Buffer) => {
        text += chunk.toString()
      })
      cut.body.on('end', resolve)
    })
    await eventually(() => text === pieces[0])
    // Another stream of the same gateway, quiet at an event boundary, shows the sweeps went on meanwhile.
    chain.mock.steer('witness', { hang: true })
    const witness = await open(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('witness') })
    await new Promise<void>((resolve) => {
      let seen = ''
      witness.body.on('data', (chunk: Buffer) => {
        seen += chunk.toString()
        if (seen.split(KEEP_ALIVE).length > 3) resolve()
      })
    })
    witness.body.destroy()
    expect(text).toBe(pieces[0])
    scripted.release()
    scripted.release()
    await ended
    // Quiet after the whole event: comments may follow it, never sit inside it.
    expect(text.split(KEEP_ALIVE).join('')).toBe(pieces.join(''))
    expect(text.startsWith(event)).toBe(true)
  })
})

describe('one sweeper for every stream', () => {
  const chain = useChain({ keepAlive: { streamMs: 100 } })
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length
  // Unreferenced timers are not among the active resources: every timer made, referenced or not, is counted here.
  const created = {
    count: 0,
    hook: createHook({
      init: (_id, type) => {
        if (type === 'Timeout') created.count++
      },
    }),
    enable: () => created.hook.enable(),
    disable: () => created.hook.disable(),
  }

  it('1 000 held streams cost no more timers than one', { timeout: 60_000 }, async () => {
    chain.mock.steer('held forever', { hang: true })
    const pool = new Pool(chain.url, { connections: 1000, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })
    const hold = () =>
      pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('held forever')),
      })
    try {
      // Each request resolves on its head, which only a keep-alive sends: the upstream never answers.
      const first = await hold()
      expect(first.statusCode).toBe(200)
      const withOne = timers()
      created.enable()
      const rest = await Promise.all(Array.from({ length: 999 }, hold))
      expect(rest.every((r) => r.statusCode === 200)).toBe(true)
      expect(timers()).toBeLessThanOrEqual(withOne)
      created.disable()
      // A timer per stream would be 999 more; what is made is the undici and server machinery's handful.
      expect(created.count).toBeLessThan(100)
      // Every one of them is kept alive: each gets its next comment.
      const comments = await Promise.all(
        [first, ...rest].map(
          (r) =>
            new Promise<string>((resolve) => {
              let text = ''
              r.body.on('data', (chunk: Buffer) => {
                text += chunk.toString()
                if (text.includes(`${KEEP_ALIVE}${KEEP_ALIVE}`)) resolve(text)
              })
            }),
        ),
      )
      expect(comments).toHaveLength(1000)
    } finally {
      await pool.destroy()
      chain.mock.steer('held forever', undefined)
    }
  })
})
