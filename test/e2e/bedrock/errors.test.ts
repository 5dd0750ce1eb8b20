import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BedrockFixture, CLAUDE_ON_BEDROCK, startBedrockFixture } from '../../support/bedrock.js'
import { KEY_A } from '../../support/fixture.js'

// Bedrock's errors in each client's terms: `x-amzn-errortype` + `{ message }` answers, exceptions inside an event
// stream, damaged and oversized frames; each a clear error, and the gateway goes on serving.

let fx: BedrockFixture
beforeAll(async () => {
  fx = await startBedrockFixture({
    upstream: { credentials: undefined, apiKey: 'bedrock-key', maxFrameBytes: 64 * 1024 },
    mock: { bedrock: { apiKeys: ['bedrock-key'] } },
  })
})
afterAll(() => fx.close())

const anthropic = () => new Anthropic({ baseURL: fx.url, apiKey: KEY_A, maxRetries: 0 })
const openai = () => new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
const claude = (text: string, mock: Record<string, unknown>) => ({
  model: CLAUDE_ON_BEDROCK,
  max_tokens: 32,
  messages: [{ role: 'user' as const, content: text }],
  mock,
})

/** A raw Messages stream through the gateway: its status and text. */
async function rawStream(mock: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${fx.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...claude('stream', mock), stream: true }),
  })
  return { status: res.status, text: await res.text() }
}

const stillServes = async () => {
  const message = await anthropic().messages.create(claude('alive', {}))
  expect(message.content[0]).toMatchObject({ text: 'Echo: alive' })
}

describe('Bedrock errors to an Anthropic client', () => {
  it.each([
    [429, undefined, 429, 'rate_limit_error'],
    [400, undefined, 400, 'invalid_request_error'],
    [404, undefined, 404, 'not_found_error'],
    [408, 'ModelTimeoutException', 504, 'timeout_error'],
    [429, 'ModelNotReadyException', 503, 'overloaded_error'],
    [503, 'ServiceUnavailableException', 503, 'overloaded_error'],
  ])('Bedrock %s %s → %s %s', async (status, type, expected, errorType) => {
    const error = await anthropic()
      .messages.create(claude('fail', { status, ...(type ? { error_type: type } : {}) }))
      .catch((e: unknown) => e)
    expect(error).toMatchObject({
      status: expected,
      error: { type: 'error', error: { type: errorType, message: expect.stringContaining('Mock') } },
    })
  })

  it('AccessDeniedException is the gateway’s credentials failing: 502 upstream_auth_failed, the cause in the log', async () => {
    const error = await anthropic()
      .messages.create(claude('denied', { status: 403 }))
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 502 })
    expect(JSON.stringify(fx.logs)).toContain('AccessDeniedException: Mock AccessDeniedException')
  })

  it('an exception inside the stream: Anthropic’s error event, after the events before it', async () => {
    const { status, text } = await rawStream({ stream_exception: 'throttlingException' })
    expect(status).toBe(200)
    expect(text).toContain('event: message_start')
    expect(text).toMatch(
      /event: error\ndata: \{"type":"error","error":\{"type":"rate_limit_error","message":"Mock throttlingException in the stream\."\}/,
    )
    await stillServes()
  })

  it('a frame with a bad CRC: the stream breaks off with an error event, nothing after it relayed', async () => {
    const { text } = await rawStream({ corrupt_frame: true })
    expect(text).toContain('event: message_start')
    expect(text).toContain('event: error')
    expect(text).not.toContain('message_stop')
    expect(JSON.stringify(fx.logs)).toContain('damaged event-stream frame')
    await stillServes()
  })

  it('a 20 MB frame: refused from its prelude (maxFrameBytes), the process alive', async () => {
    const { text } = await rawStream({ oversized_frame_bytes: 20 * 1024 * 1024 })
    expect(text).toContain('event: error')
    expect(JSON.stringify(fx.logs)).toContain(`event-stream frame of ${20 * 1024 * 1024} bytes, over the limit of 65536 (maxFrameBytes)`)
    await stillServes()
  })

  it('maxFrameBytes bounds ordinary frames too: a 100 KB delta over a 64 KiB bound breaks the stream', async () => {
    const { text } = await rawStream({ content_bytes: 100_000, chunks: 1 })
    expect(text).toContain('event: error')
    await stillServes()
  })
})

describe('Bedrock errors to an OpenAI client (translated)', () => {
  it('throttling 429 and validation 400 as OpenAI errors', async () => {
    const steer = (status: number) => {
      fx.mock.steer('steer-me', { status })
      return openai()
        .chat.completions.create({ model: CLAUDE_ON_BEDROCK, messages: [{ role: 'user', content: 'steer-me' }] })
        .catch((e: unknown) => e)
        .finally(() => fx.mock.steer('steer-me', undefined))
    }
    expect(await steer(429)).toMatchObject({ status: 429, error: { message: expect.stringContaining('ThrottlingException') } })
    expect(await steer(400)).toMatchObject({ status: 400, error: { message: expect.stringContaining('ValidationException') } })
  })

  it('a stream exception mid-stream: the chat stream ends with an error the SDK raises', async () => {
    fx.mock.steer('mid-stream', { stream_exception: 'modelStreamErrorException' })
    try {
      const stream = await openai().chat.completions.create({
        model: CLAUDE_ON_BEDROCK,
        messages: [{ role: 'user', content: 'mid-stream' }],
        stream: true,
      })
      const read = async () => {
        for await (const _chunk of stream) {
          // drained
        }
      }
      await expect(read()).rejects.toThrow(/modelStreamErrorException/)
    } finally {
      fx.mock.steer('mid-stream', undefined)
    }
  })
})
