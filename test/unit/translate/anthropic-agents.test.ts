// Real coding agents' requests translate to every other format without a refusal, naming the hint fields they
// drop. `test/support/agents/` holds the requests of Claude Code 2.1 and Codex CLI runs recorded against a mock
// provider (keys redacted, home and project paths replaced; the mock's answers left out), as the agents sent them.
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { anthropic, DIALECTS, type Dialect, gemini, openai, translatorFor } from '../../../src/dialects/index.js'
import type { Operation } from '../../../src/types.js'
import { callInfo, ok } from './helpers.js'

/** The agents' recorded requests. */
const SHARED = new URL('../../support/agents/', import.meta.url)

interface Exchange {
  request: { method: string; path: string; body: unknown }
}

/** The model-call request bodies of every transcript whose name starts with `prefix`. */
function requests(prefix: string, path: string): { name: string; body: Record<string, unknown> }[] {
  const files = readdirSync(SHARED).filter((file) => file.startsWith(prefix) && file.endsWith('.json'))
  return files.flatMap((file) => {
    const { exchanges } = JSON.parse(readFileSync(new URL(file, SHARED), 'utf8')) as { exchanges: Exchange[] }
    return exchanges
      .filter((exchange) => exchange.request.method === 'POST' && exchange.request.path.split('?')[0] === path)
      .map((exchange, i) => ({ name: `${file} #${i + 1}`, body: exchange.request.body as Record<string, unknown> }))
  })
}

const CLAUDE_CODE = requests('claude-code-', '/v1/messages')
const CODEX = requests('codex-exec-', '/v1/responses')

/** The translation of `body` from `inbound`'s `operation` toward `outbound`, which must succeed. */
function translate(inbound: Dialect, outbound: Dialect, operation: Operation, body: Record<string, unknown>) {
  const translator = translatorFor(inbound, outbound, operation)
  if (!translator) throw new Error(`no translator from ${inbound.name} to ${outbound.name}`)
  return ok(translator.request(body, callInfo(body.stream === true)))
}

describe('Claude Code’s requests', () => {
  it('are there to read: every Messages call of the recorded runs', () => {
    expect(CLAUDE_CODE.length).toBeGreaterThanOrEqual(4)
  })

  for (const other of DIALECTS.filter((dialect) => dialect !== anthropic)) {
    describe(`toward an upstream of ${other.name}`, () => {
      it.each(CLAUDE_CODE)('$name translates, its hints dropped and named', ({ body }) => {
        const { body: upstream, plan } = translate(anthropic, other, 'messages', body)
        expect(plan.dropped).toEqual(expect.arrayContaining(['metadata', 'context_management']))
        // The dropped fields are named, never sent; a cache breakpoint is Converse's `cachePoint` where it has them.
        const sent = JSON.stringify(upstream)
        expect(sent).not.toContain('cache_control')
        if (other.name === 'bedrock') {
          expect(plan.dropped).not.toContain('system[2].cache_control')
          expect(sent).toContain('{"cachePoint":{"type":"default"}}')
        } else expect(plan.dropped).toContain('system[2].cache_control')
        expect(sent).not.toContain('clear_thinking_20251015')
        expect(sent).not.toContain('device_id')
      })
    })
  }

  it('send every tool and the system prompt, and think as asked', () => {
    const [text, adaptive] = [
      CLAUDE_CODE.find((r) => r.name.startsWith('claude-code-p-text.json')),
      CLAUDE_CODE.find((r) => r.name.includes('default-model')),
    ]
    const chat = translate(anthropic, openai, 'messages', text?.body ?? {}).body as Record<string, unknown[]>
    expect(chat.tools).toHaveLength(24)
    expect(chat.messages?.[0]).toMatchObject({ role: 'system' })
    // A budget of 31999 is high effort for a chat model; Gemini takes the budget as it is.
    expect(chat).toMatchObject({ max_completion_tokens: 32000, reasoning_effort: 'high' })
    const geminiBody = translate(anthropic, gemini, 'messages', text?.body ?? {}).body as Record<string, Record<string, unknown>>
    expect(geminiBody.generationConfig).toEqual({ maxOutputTokens: 32000, thinkingConfig: { thinkingBudget: 31999 } })
    // Adaptive thinking at an effort: the effort itself, or Google's budget for it.
    expect(translate(anthropic, openai, 'messages', adaptive?.body ?? {}).body).toMatchObject({
      reasoning_effort: 'high',
      max_completion_tokens: 64000,
    })
    const withSystem = translate(anthropic, gemini, 'messages', adaptive?.body ?? {}).body as { contents: unknown[] }
    // Claude Code 2.1's system message mid-conversation is the user's for Gemini.
    expect(withSystem.contents.at(-1)).toMatchObject({ role: 'user', parts: [{ text: expect.stringContaining('Available agent types') }] })
  })

  it('send the tool result back with its call, the thinking before it left out', () => {
    const loop = CLAUDE_CODE.find((r) => JSON.stringify(r.body).includes('tool_result'))
    const chat = translate(anthropic, openai, 'messages', loop?.body ?? {}).body as { messages: Record<string, unknown>[] }
    const call = chat.messages.find((message) => message.role === 'assistant')
    expect(call).toMatchObject({
      content: 'I will run the command.',
      tool_calls: [{ id: 'toolu_01VZR2tBsoVze3BtA1', type: 'function', function: { name: 'Bash' } }],
    })
    expect(chat.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'toolu_01VZR2tBsoVze3BtA1', content: 'mg-tool-ok' })
    expect(JSON.stringify(chat)).not.toContain('The user wants a short answer.')
  })
})

describe('Codex CLI’s requests', () => {
  it('are there to read: every Responses call of the recorded runs', () => {
    expect(CODEX.length).toBeGreaterThanOrEqual(3)
  })

  for (const other of [gemini, anthropic]) {
    describe(`toward an upstream of ${other.name}`, () => {
      it.each(CODEX)('$name translates, its hints dropped and named', ({ body }) => {
        const { body: upstream, plan } = translate(openai, other, 'responses', body)
        expect(plan.dropped).toEqual(
          expect.arrayContaining(['store', 'prompt_cache_key', 'client_metadata', 'reasoning.summary', 'tools[8]']),
        )
        const sent = JSON.stringify(upstream)
        expect(sent).not.toContain('x-codex-turn-metadata')
        // The namespace's functions are declared under their namespaced names.
        expect(sent).toContain('multi_agent_v1__spawn_agent')
      })
    })
  }

  it('drop the reasoning item only OpenAI can read, and keep the call and its output', () => {
    const loop = CODEX.find((r) => JSON.stringify(r.body).includes('function_call_output'))
    const { body, plan } = translate(openai, anthropic, 'responses', loop?.body ?? {})
    expect(plan.dropped).toContain('input[4]')
    const messages = (body as { messages: { role: string; content: unknown }[] }).messages
    expect(messages.at(-2)).toMatchObject({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_bc84fc6d076cc0619e962e74', name: 'exec_command' }],
    })
    expect(messages.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'call_bc84fc6d076cc0619e962e74' }],
    })
    expect(body).toMatchObject({ max_tokens: 4096 })
  })
})
