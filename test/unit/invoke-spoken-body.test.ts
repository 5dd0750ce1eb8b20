import type { IncomingHttpHeaders } from 'node:http'
import { describe, expect, it } from 'vitest'
import { bedrockInvoke } from '../../src/dialects/bedrock/invoke.js'
import type { RequestBytes } from '../../src/dialects/dialect.js'
import { bodyOfBytes } from '../../src/http/read-body.js'
import { Gen, stringText, valueText, ws } from '../support/json-corpus.js'

/** A body as the gateway reads it: parsed, or for a large one scanned, under InvokeModel's rules. */
function read(text: string): Promise<RequestBytes> {
  return bodyOfBytes(
    Buffer.from(text),
    { maxDepth: 64, singleKeys: bedrockInvoke.readFields },
    { readsMembers: true, elementFields: bedrockInvoke.elementFields },
  )
}

/** The spoken body of a read InvokeModel body on `/model/{path}/invoke`, for the configured model `configured`. */
function spokenOf(body: RequestBytes, headers: IncomingHttpHeaders, path = 'us.anthropic.claude-sonnet-4-5-v1%3A0', stream = false) {
  const target = bedrockInvoke.read(body.fields, { model: path, stream })
  return { target, ...bedrockInvoke.spokenBody!(body, { ...target, model: 'configured' }, headers) }
}

/** `spokenOf` a body text. */
async function spoken(text: string, headers: IncomingHttpHeaders = {}, path?: string, stream?: boolean) {
  return spokenOf(await read(text), headers, path, stream)
}

/** The spoken body as parsing the body and building it again gives it (how it was made before it was spliced). */
function parseAndRebuild(text: string, target: { model: string; stream: boolean }, header: string | string[] | undefined) {
  const { anthropic_version: _version, anthropic_beta: betas, ...rest } = JSON.parse(text) as Record<string, unknown>
  const all = [...(Array.isArray(header) ? header.join(',') : (header ?? '')).split(','), ...((betas as string[] | undefined) ?? [])]
  const beta = [...new Set(all.map((name) => name.trim()).filter((name) => name !== ''))].join(',')
  return { value: { model: target.model, ...rest, stream: target.stream }, headers: beta === '' ? {} : { 'anthropic-beta': beta } }
}

/** A value with its object members sorted by key, own `__proto__` members kept: equal values, equal texts. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    const item = sorted((value as Record<string, unknown>)[key])
    Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true })
  }
  return out
}

const same = (value: unknown) => JSON.stringify(sorted(value))

const BETAS = ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07', ' claude-code-20250219 ', '', 'a,b']

/** An InvokeModel body its reader accepts, members in any order, whitespace, escapes and numbers varied. */
function invokeBody(g: Gen): string {
  const members: string[] = []
  // The version's key is escaped at times: JSON reads it as the same member, and so must the splice.
  const versionKey = g.chance(0.8) ? 'anthropic_version' : 'anthropic\\u005fversion'
  if (g.chance(0.8)) members.push(`"${versionKey}":${g.chance(0.8) ? '"bedrock-2023-05-31"' : stringText(g)}`)
  if (g.chance(0.7)) {
    const betas = Array.from({ length: g.int(4) }, () => JSON.stringify(g.pick(BETAS)))
    members.push(`"anthropic_beta":[${betas.join(`,${ws(g)}`)}]`)
  }
  members.push(`"max_tokens":${g.pick(['64', '64.0', '6.4e1', '0', '8192'])}`)
  const messages = Array.from(
    { length: 1 + g.int(3) },
    () => `{"role":${g.pick(['"user"', '"assistant"'])},"content":${stringText(g, g.chance(0.3))}}`,
  )
  members.push(`"messages":[${messages.join(',')}]`)
  for (const key of ['system', 'metadata', 'tools', 'x y', 'é', 'anthropic\\u005fversionx', '__proto__']) {
    if (g.chance(0.3)) members.push(`"${key}":${valueText(g, 1)}`)
  }
  if (g.chance(0.3)) members.push(`"temperature":${g.pick(['0', '1.0', '0.5e0'])}`)
  for (let k = members.length - 1; k > 0; k--) {
    const j = g.int(k + 1)
    ;[members[k], members[j]] = [members[j] as string, members[k] as string]
  }
  return `${ws(g)}{${members.map((member) => `${ws(g)}${member.replace(':', `${ws(g)}:${ws(g)}`)}${ws(g)}`).join(',')}}${ws(g)}`
}

describe('InvokeModel spoken body: spliced, as parsing and building again would give it', () => {
  it('the same members, fields and anthropic-beta header as a parse and a rebuild, for 1000 bodies (seeded)', async () => {
    let checked = 0
    for (let seed = 1; seed <= 1000; seed++) {
      const g = new Gen(seed)
      const text = invokeBody(g)
      const header = g.pick<string | string[] | undefined>([
        undefined,
        '',
        'context-1m-2025-08-07',
        'a, b,a',
        ['x', 'y,interleaved-thinking-2025-05-14'],
      ])
      const stream = g.chance(0.5)
      const context = `seed ${seed}: ${text} with ${JSON.stringify(header)}`
      // A body the reader refuses (a number too large for a double) never gets this far.
      const body = await read(text).catch(() => undefined)
      if (body === undefined) continue
      checked++
      const out = spokenOf(body, header === undefined ? {} : { 'anthropic-beta': header }, 'us.anthropic.claude-sonnet-4-5-v1%3A0', stream)
      expect(out.target, context).toEqual({ model: 'us.anthropic.claude-sonnet-4-5-v1:0', stream })
      const expected = parseAndRebuild(text, { model: 'configured', stream }, header)
      expect(same(JSON.parse(out.body.bytes.toString('utf8'))), context).toBe(same(expected.value))
      expect(same(out.body.fields), context).toBe(same(expected.value))
      expect(same(out.body.value), context).toBe(same(expected.value))
      expect(out.headers, context).toEqual(expected.headers)
    }
    expect(checked).toBeGreaterThan(900)
  })

  it("keeps every other member's bytes as sent, and where the model lies for a rename", async () => {
    const text =
      '{"anthropic_version":"bedrock-2023-05-31", "max_tokens": 64.0,"temperature":1.0,"system":"caf\\u00e9","anthropic_beta":["b"],"messages":[{"role":"user","content":"hi"}]}'
    const out = await spoken(text)
    expect(out.body.bytes.toString('utf8')).toBe(
      '{"model":"configured","stream":false,"max_tokens": 64.0,"temperature":1.0,"system":"caf\\u00e9","messages":[{"role":"user","content":"hi"}]}',
    )
    const [from, to] = out.body.spans!.get('model')!
    expect(out.body.bytes.toString('utf8', from, to)).toBe('"configured"')
    expect(out.headers).toEqual({ 'anthropic-beta': 'b' })
  })

  it('a large body (scanned) is never parsed whole: its betas are read from their own bytes', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024)
    const text = JSON.stringify({
      anthropic_version: 'bedrock-2023-05-31',
      system: big,
      anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'],
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const out = await spoken(text, { 'anthropic-beta': 'context-1m-2025-08-07' }, 'claude', true)
    expect(out.body.value).toBeUndefined()
    expect(out.headers).toEqual({ 'anthropic-beta': 'context-1m-2025-08-07,interleaved-thinking-2025-05-14' })
    expect(JSON.parse(out.body.bytes.toString('utf8'))).toEqual({
      model: 'configured',
      stream: true,
      system: big,
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(out.body.fields.anthropic_beta).toBeUndefined()
  })

  it('still refuses what it refused: a body with a model or stream, betas that are not strings', async () => {
    await expect(spoken('{"model":"m","max_tokens":8,"messages":[]}')).rejects.toThrow(/named in the path/)
    await expect(spoken('{"stream":true,"max_tokens":8,"messages":[]}')).rejects.toThrow(/path says whether/)
    await expect(spoken('{"anthropic_beta":[1],"max_tokens":8,"messages":[]}')).rejects.toThrow(/array of strings/)
    await expect(spoken('{"max_tokens":-1,"messages":[]}')).rejects.toThrow(/max_tokens/)
    await expect(spoken('{"max_tokens":8,"messages":{}}')).rejects.toThrow(/messages/)
  })
})
