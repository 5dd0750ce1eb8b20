// The ledger's read of a whole answer's usage (`usageOfBody`): the outermost object's usage member alone, found from
// the end. Over bodies of every format, with their members in any order and decoys of the usage key inside strings and
// nested values, it must give exactly the counts a parse of the whole body gives.
import { describe, expect, it } from 'vitest'
import { mulberry32 } from '../../bench/lib/random.mjs'
import { factsOfBody, usageOfBody } from '../../src/call/answer-facts.js'
import { anthropic, type Dialect, dialectNamed, gemini, openai } from '../../src/dialects/index.js'
import { topLevelObjectMember } from '../../src/json/after-key.js'

/** Strings that look like the usage member, or end in backslashes, as a model's text or a tool's input may. */
const DECOY_TEXTS = ['"usage":{"prompt_tokens":999}', 'usage', '\\', 'a\\"usage\\":{', '}]}', '{"usageMetadata":{"promptTokenCount":5}}']

/** A JSON value holding decoys: the usage key as text, and (`nested`) as a member of a nested object. */
function decoy(next: () => number, field: string, nested: boolean): unknown {
  const text = DECOY_TEXTS[Math.floor(next() * DECOY_TEXTS.length)] as string
  if (!nested || next() < 0.5) return { text, more: [text, { [text]: text }] }
  return { [field]: { input_tokens: 1234, prompt_tokens: 1234, promptTokenCount: 1234, inputTokens: 1234 }, text }
}

/** The Bedrock dialect: Converse's answers (Claude's variant is Anthropic's). */
const bedrockConverse = dialectNamed('bedrock') as Dialect

/** Each format's answer, usage member last as the APIs send it. */
const ANSWERS: Array<{ name: string; dialect: Dialect; field: string; body: Record<string, unknown> }> = [
  {
    name: 'chat completion',
    dialect: openai,
    field: 'usage',
    body: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 3 } },
      system_fingerprint: 'fp_1',
    },
  },
  {
    name: 'Responses object',
    dialect: openai,
    field: 'usage',
    body: {
      id: 'resp_1',
      object: 'response',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'hi' }] }],
      usage: { input_tokens: 5, output_tokens: 6, output_tokens_details: { reasoning_tokens: 2 } },
    },
  },
  {
    name: 'Anthropic message',
    dialect: anthropic,
    field: 'usage',
    body: {
      id: 'msg_1',
      type: 'message',
      content: [{ type: 'tool_use', id: 't', name: 'n', input: { q: 1 } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 21, output_tokens: 4, cache_read_input_tokens: 8, cache_creation_input_tokens: 2 },
    },
  },
  {
    name: 'Gemini answer',
    dialect: gemini,
    field: 'usageMetadata',
    body: {
      candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, thoughtsTokenCount: 2 },
      modelVersion: 'gemini-2.5-flash',
    },
  },
  {
    name: 'Converse answer',
    dialect: bedrockConverse,
    field: 'usage',
    body: {
      output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 },
      metrics: { latencyMs: 10 },
    },
  },
]

describe("the ledger's read of a whole answer's usage", () => {
  for (const { name, dialect, field, body } of ANSWERS) {
    it(`${name}: the counts a whole parse gives, with members in any order and decoys anywhere`, () => {
      const next = mulberry32(name.length * 7919)
      expect(usageOfBody(dialect, Buffer.from(JSON.stringify(body)))).toEqual(factsOfBody(dialect, Buffer.from(JSON.stringify(body))).usage)
      expect(usageOfBody(dialect, Buffer.from(JSON.stringify(body)))?.total_tokens).toBeGreaterThan(0)
      // As the API sends it, the member is read alone: the whole body is not parsed.
      expect(topLevelObjectMember(Buffer.from(JSON.stringify(body)), field, 4096)?.value).toEqual(body[field])
      for (let round = 0; round < 200; round++) {
        const members = Object.entries(body).map(([k, v]) => [k, v] as [string, unknown])
        // Decoys before and after the usage member, some of them nested members named like it.
        for (let d = 0; d < 1 + Math.floor(next() * 3); d++) members.push([`extra${d}`, decoy(next, field, true)])
        for (let i = members.length - 1; i > 0; i--) {
          const j = Math.floor(next() * (i + 1))
          ;[members[i], members[j]] = [members[j] as [string, unknown], members[i] as [string, unknown]]
        }
        const text = JSON.stringify(Object.fromEntries(members), null, round % 3 === 0 ? 2 : undefined)
        const bytes = Buffer.from(text)
        expect(usageOfBody(dialect, bytes), `round ${round}: ${text}`).toEqual(factsOfBody(dialect, bytes).usage)
      }
    })
  }

  it('reads a member only when it is directly in the outermost object, near the end, and an object', () => {
    const at = (text: string) => topLevelObjectMember(Buffer.from(text), 'usage', 4096)?.value
    expect(at('{"a":1,"usage":{"n":1}}')).toEqual({ n: 1 })
    expect(at('{"usage":{"n":1},"b":"x\\\\"}')).toEqual({ n: 1 })
    // Inside another value, inside a string, or not an object: not told, so the caller parses the whole.
    expect(at('{"usage":{"n":1},"b":{"usage":{"n":2}}}')).toBeUndefined()
    expect(at('{"usage":{"n":1},"b":["x",{"usage":{"n":2}}]}')).toBeUndefined()
    expect(at('{"usage":{"n":1},"b":"\\"usage\\":{\\"n\\":2}"}')).toEqual({ n: 1 })
    expect(at('{"b":"usage","c":1}')).toBeUndefined()
    expect(at('{"usage":null}')).toBeUndefined()
    expect(at(`{"usage":{"n":1},"pad":"${'p'.repeat(5000)}"}`)).toBeUndefined()
    expect(at('{"a":1}')).toBeUndefined()
  })

  it('gives the same counts as a whole parse when the usage is far from the end, or absent', () => {
    const far = Buffer.from(JSON.stringify({ usage: { prompt_tokens: 4, completion_tokens: 1 }, choices: [{ text: 'x'.repeat(10_000) }] }))
    expect(usageOfBody(openai, far)?.total_tokens).toBe(5)
    const none = Buffer.from(JSON.stringify({ choices: [] }))
    expect(usageOfBody(openai, none)).toEqual(factsOfBody(openai, none).usage)
  })
})
