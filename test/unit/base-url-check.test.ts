import { describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'

/** createGateway with one upstream of `type` at `baseUrl`: the error it throws, or undefined when it accepts it. */
async function refusal(type: string, baseUrl: string): Promise<string | undefined> {
  let gateway: ReturnType<typeof createGateway> | undefined
  try {
    gateway = createGateway({
      upstreams: { up: { type, baseUrl, apiKey: 'sk-upstream' } },
      models: [{ id: 'm', upstream: 'up' }],
      auth: { apiKeys: ['sk-1'] },
    } as GatewayOptions)
  } catch (error) {
    if (!isGatewayError(error)) throw error
    expect(error.code).toBe('invalid_options')
    return error.message
  }
  await gateway.close()
  return undefined
}

describe('a baseUrl that goes on into the path of a call is refused with the base URL meant', () => {
  it.each([
    ['openai', 'https://api.openai.com/v1/chat/completions', 'https://api.openai.com/v1'],
    ['openai', 'https://api.openai.com/v1/chat/completions/', 'https://api.openai.com/v1'],
    ['openai', 'https://api.openai.com/v1/responses', 'https://api.openai.com/v1'],
    ['openai', 'https://api.openai.com/v1/embeddings', 'https://api.openai.com/v1'],
    ['openai', 'http://127.0.0.1:11434/ollama/v1/chat/completions', 'http://127.0.0.1:11434/ollama/v1'],
    ['gemini', 'https://generativelanguage.googleapis.com/v1beta/models', 'https://generativelanguage.googleapis.com'],
    [
      'gemini',
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
      'https://generativelanguage.googleapis.com',
    ],
    ['gemini', 'https://proxy.example.com/google/v1/models/gemini-2.5-flash', 'https://proxy.example.com/google'],
    ['anthropic', 'https://api.anthropic.com/v1/messages', 'https://api.anthropic.com'],
    ['anthropic', 'https://gw.example.com/claude/v1/messages/count_tokens', 'https://gw.example.com/claude'],
  ])('%s %s: did you mean %s?', async (type, baseUrl, meant) => {
    const message = await refusal(type, baseUrl)
    expect(message).toBe(
      `upstreams.up.baseUrl ends in the path of a call ('${new URL(baseUrl).pathname}'), which the gateway adds itself; did you mean '${meant}'?`,
    )
  })

  it.each([
    ['openai', 'https://api.openai.com/v1'],
    ['openai', 'https://example.openai.azure.com/openai/v1/'],
    ['openai', 'https://generativelanguage.googleapis.com/v1beta/openai'],
    ['openai', 'https://gw.example.com/responses-team/v1'],
    ['gemini', 'https://generativelanguage.googleapis.com'],
    ['gemini', 'https://generativelanguage.googleapis.com/v1beta/'],
    ['anthropic', 'https://api.anthropic.com'],
    ['anthropic', 'https://api.anthropic.com/v1'],
  ])('%s %s is accepted', async (type, baseUrl) => {
    expect(await refusal(type, baseUrl)).toBeUndefined()
  })
})
