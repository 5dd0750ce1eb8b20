import { describe, expect, it } from 'vitest'
import { splicedBody } from '../../src/dialects/spoken-body.js'
import { vertexCountTokens, vertexRawPredict } from '../../src/dialects/vertex/client.js'
import { bodyOfBytes } from '../../src/http/read-body.js'
import { Gen, stringText, valueText, ws } from '../support/json-corpus.js'

const parsed = (text: string) => {
  const value = JSON.parse(text) as Record<string, unknown>
  return { bytes: Buffer.from(text), fields: value, value, spans: undefined }
}

describe('splicedBody: top-level members out and in, by splicing the bytes', () => {
  it('takes out the named members wherever they are, writes the added ones first, keeps every other byte', () => {
    const text = `{ "anthropic_version" : "vertex-2023-10-16", "messages":[{"role":"user","content":"a \\"quoted\\" }{ text"}],
      "stream": true, "system": {"nested": ["anthropic_version", {"stream": false}]}, "max_tokens": 64 }`
    const out = splicedBody(parsed(text), ['anthropic_version'], { model: 'claude-x', stream: false })
    const value = JSON.parse(out.bytes.toString('utf8'))
    expect(value).toEqual({
      model: 'claude-x',
      stream: false,
      messages: [{ role: 'user', content: 'a "quoted" }{ text' }],
      system: { nested: ['anthropic_version', { stream: false }] },
      max_tokens: 64,
    })
    expect(Object.keys(value)).toEqual(['model', 'stream', 'messages', 'system', 'max_tokens'])
    expect(out.value).toEqual(value)
    expect(out.fields).toEqual(value)
    // The added model's span: where a later rename splices.
    const [from, to] = out.spans!.get('model')!
    expect(out.bytes.toString('utf8', from, to)).toBe('"claude-x"')
  })

  it('handles a removed member last, first, alone, and strings ending in backslashes', () => {
    expect(JSON.parse(splicedBody(parsed('{"a":1,"anthropic_version":"v"}'), ['anthropic_version'], {}).bytes.toString())).toEqual({ a: 1 })
    expect(JSON.parse(splicedBody(parsed('{"anthropic_version":"v","a":"x\\\\"}'), ['anthropic_version'], {}).bytes.toString())).toEqual({
      a: 'x\\',
    })
    expect(JSON.parse(splicedBody(parsed('{"anthropic_version":"v"}'), ['anthropic_version'], { model: 'm' }).bytes.toString())).toEqual({
      model: 'm',
    })
    expect(JSON.parse(splicedBody(parsed('{}'), [], { model: 'm', stream: true }).bytes.toString())).toEqual({ model: 'm', stream: true })
  })

  it('on a large body (scanned, not parsed): the same result, the skeleton without the removed members', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024)
    const text = JSON.stringify({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 8,
      messages: [{ role: 'user', content: big }],
      stream: true,
    })
    const body = await bodyOfBytes(
      Buffer.from(text),
      { maxDepth: 64, singleKeys: vertexRawPredict.readFields },
      { readsMembers: true, elementFields: ['role'] },
    )
    expect(body.value).toBeUndefined()
    const target = vertexRawPredict.read(body.fields, { model: 'claude-x', stream: true })
    const spoken = vertexRawPredict.spokenBody!(body, { ...target, model: 'configured' }, {})
    expect(spoken.headers).toEqual({})
    expect(spoken.body.value).toBeUndefined()
    expect(spoken.body.fields.anthropic_version).toBeUndefined()
    expect(JSON.parse(spoken.body.bytes.toString('utf8'))).toEqual({
      model: 'configured',
      stream: true,
      max_tokens: 8,
      messages: [{ role: 'user', content: big }],
    })
  })

  it('a count keeps its body but names the configured model', () => {
    const text = '{"anthropic_version":"vertex-2023-10-16","model":"claude-sonnet-4-5@20250929","messages":[]}'
    const spoken = vertexCountTokens.spokenBody!(parsed(text), { model: 'claude-sonnet-4-5', stream: false }, {})
    expect(JSON.parse(spoken.body.bytes.toString())).toEqual({ model: 'claude-sonnet-4-5', messages: [] })
  })
})

/** Top-level keys as written: the names the splicers take out, some of them escaped, and others. */
const TOP_KEYS = [
  'anthropic_version',
  'anthropic_beta',
  'anthropic\\u005fversion',
  'model',
  'mod\\u0065l',
  'stream',
  'messages',
  'max_tokens',
  'system',
  '__proto__',
  '\\u005f_proto__',
  'é',
  '',
  'a\\"b',
  'x y',
  'metadata',
]

/** A JSON object text with distinct top-level keys (as JSON reads them), whitespace, escapes and numbers varied. */
function objectWithKeys(g: Gen): string {
  const seen = new Set<string>()
  const members: string[] = []
  for (let k = g.int(9); k > 0; k--) {
    const key = g.chance(0.8) ? `"${g.pick(TOP_KEYS)}"` : stringText(g)
    const name = JSON.parse(key) as string
    if (seen.has(name)) continue
    seen.add(name)
    members.push(`${ws(g)}${key}${ws(g)}:${ws(g)}${valueText(g, 1)}${ws(g)}`)
  }
  return `${ws(g)}{${members.join(',') || ws(g)}}${ws(g)}`
}

/** What parsing a body and building it again gives: `added` first, then every member not removed, in order. */
function rebuilt(value: Record<string, unknown>, removed: readonly string[], added: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(added)) out[key] = item
  for (const key of Object.keys(value)) {
    if (removed.includes(key) || Object.hasOwn(added, key)) continue
    Object.defineProperty(out, key, { value: value[key], enumerable: true, writable: true, configurable: true })
  }
  return out
}

describe('splicedBody against parsing and building again (seeded)', () => {
  const removed = ['anthropic_version', 'anthropic_beta']
  it('gives the same members in the same order, fields and value alike, for 2000 bodies', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const g = new Gen(seed)
      const text = objectWithKeys(g)
      const added: Record<string, string | boolean> = g.chance(0.8) ? { model: g.pick(['m', 'é-model', 'a"b']), stream: g.chance(0.5) } : {}
      const out = splicedBody(parsed(text), removed, added)
      const expected = JSON.stringify(rebuilt(JSON.parse(text), removed, added))
      const context = `seed ${seed}: ${text}`
      expect(JSON.stringify(JSON.parse(out.bytes.toString('utf8'))), context).toBe(expected)
      expect(JSON.stringify(out.fields), context).toBe(expected)
      expect(out.value, context).toBe(out.fields)
      expect(Object.getPrototypeOf(out.fields), context).toBe(Object.prototype)
      if (typeof added.model === 'string') {
        const [from, to] = out.spans!.get('model')!
        expect(JSON.parse(out.bytes.toString('utf8', from, to)), context).toBe(added.model)
      }
    }
  })
})
