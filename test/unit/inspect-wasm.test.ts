import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { generated, WASM_MODULES } from '../../scripts/build-wasm.mjs'
import { chatRequest } from '../../src/dialects/openai/chat-completions/wire.js'
import { isGatewayError } from '../../src/errors.js'
import { bodyOfBytes, parseJsonObject } from '../../src/http/read-body.js'
import { inspectJson, type JsonRules } from '../../src/json/inspect.js'
import { ALL_ASCII, DECIDE, quickVerdict, settleVerdict, WASM_BODY_BYTES } from '../../src/json/inspect-wasm.js'
import { invalidUtf8At } from '../../src/json/utf8.js'
import { documentText, Gen, mutate, SPECIAL_TEXTS } from '../support/json-corpus.js'

// The WebAssembly inspector is a shortcut: every body must be refused or accepted, with the same message, as the
// JavaScript path refuses or accepts it (UTF-8 first, then the JSON grammar, then the rules).

const RULE_SETS: Array<[string, JsonRules]> = [
  ['chat completions, default depth', { maxDepth: 1000, singleKeys: chatRequest.gatewayReads }],
  ['a shallow limit', { maxDepth: 3, singleKeys: new Set(['model', 'messages', 'contents', 'role', 'a']) }],
  ['forty single keys', { maxDepth: 6, singleKeys: new Set([...Array.from({ length: 40 }, (_, i) => `k${i}`), 'model', 'a', 'b']) }],
  ['a key too long for a table', { maxDepth: 8, singleKeys: new Set(['model', 'x'.repeat(300)]) }],
  ['no single keys', { maxDepth: 5, singleKeys: new Set() }],
]

type Outcome = { value: unknown } | { error: string; param: string | undefined }

async function outcome(run: () => unknown): Promise<Outcome> {
  try {
    return { value: await run() }
  } catch (error) {
    if (!isGatewayError(error)) throw error
    return { error: error.message, param: error.param }
  }
}

/** The JavaScript path, as it was before the shortcut, for valid UTF-8: the parse, then `inspectJson`. */
function reference(bytes: Buffer, rules: JsonRules): unknown {
  const value = parseJsonObject(bytes)
  inspectJson(bytes, rules)
  return value
}

/** What reading a small body does now. */
async function actual(bytes: Buffer, rules: JsonRules): Promise<unknown> {
  return (await bodyOfBytes(bytes, rules, {})).value
}

function corpus(): Buffer[] {
  const g = new Gen(20261130)
  const bodies: Buffer[] = SPECIAL_TEXTS.map((text) => Buffer.from(text))
  for (let n = 0; n < 1500; n++) {
    const text = Buffer.from(documentText(g))
    bodies.push(text, mutate(g, text))
  }
  // What the corpus reaches too rarely: deep nesting, a repeated key among many, escaped names, high bytes.
  bodies.push(
    Buffer.from(`{"a":${'['.repeat(9)}${']'.repeat(9)}}`),
    Buffer.from(`{${Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(',')},"k35":1}`),
    Buffer.from('{"k3":1,"model":"m","k3":2}'),
    Buffer.from('{"mo\\u0064el":"a","model":"b"}'),
    Buffer.from('{"model":"é","messages":[]}'),
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
    Buffer.from(`{"model":"${'x'.repeat(70)}\\"${'y'.repeat(40)}","a":1,"a":2}`),
  )
  return bodies
}

describe('the WebAssembly inspector', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    vi.resetModules()
  })

  it('is the module its text assembles to', async () => {
    for (const module of WASM_MODULES) {
      expect(readFileSync(new URL(`../../${module.output}`, import.meta.url), 'utf8'), module.output).toBe(await generated(module))
    }
  })

  it.each(RULE_SETS)('refuses and accepts every body as the JavaScript path does (%s)', async (_name, rules) => {
    for (const bytes of corpus()) {
      const broken = invalidUtf8At(bytes)
      if (broken !== -1) {
        await expect(actual(bytes, rules), bytes.toString('latin1')).rejects.toThrow(`is not valid UTF-8 at byte ${broken};`)
        continue
      }
      const expected = await outcome(() => reference(bytes, rules))
      expect(await outcome(() => actual(bytes, rules)), bytes.toString('latin1')).toEqual(expected)
    }
  })

  it('reaches each of its verdicts, and says ASCII only of a whole body of ASCII it kept', () => {
    const rules = RULE_SETS[1]![1]
    const kinds = [0, 0, 0, 0]
    let ascii = 0
    for (const bytes of corpus()) {
      const verdict = quickVerdict(bytes, rules)
      kinds[verdict & 3]!++
      if ((verdict & ALL_ASCII) !== 0) {
        ascii++
        expect(verdict & 3).toBe(0)
        expect(bytes.every((byte) => byte < 0x80)).toBe(true)
      }
    }
    // Kept, too deep, a repeated single key, and left to JavaScript: each many times over.
    for (const count of kinds) expect(count).toBeGreaterThan(20)
    expect(ascii).toBeGreaterThan(100)
  })

  it('leaves a body larger than its page to inspectJson', () => {
    const rules = RULE_SETS[0]![1]
    const big = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(WASM_BODY_BYTES) }] }))
    expect(quickVerdict(big, rules)).toBe(DECIDE)
    expect(() => settleVerdict(DECIDE, big, rules)).not.toThrow()
    const repeated = Buffer.from(`${big.toString().slice(0, -1)},"model":"n"}`)
    expect(() => settleVerdict(quickVerdict(repeated, rules), repeated, rules)).toThrow("'model' appears more than once")
  })

  it('where there is no WebAssembly (node --jitless), leaves every body to inspectJson', async () => {
    vi.resetModules()
    vi.stubGlobal('WebAssembly', undefined)
    const fresh = await import('../../src/json/inspect-wasm.js')
    const rules = RULE_SETS[0]![1]
    const body = Buffer.from('{"model":"m","model":"n"}')
    expect(fresh.quickVerdict(body, rules)).toBe(fresh.DECIDE)
    expect(() => fresh.settleVerdict(fresh.DECIDE, body, rules)).toThrow("'model' appears more than once")
  })
})
