import { describe, expect, it } from 'vitest'
import { editMembers, editTopLevelMembers, type MemberEdits, topLevelMembers } from '../../src/json/top-members.js'
import { Gen } from '../support/json-corpus.js'
import { turnsDuring } from '../support/loop-turns.js'

// A checked JSON object's top-level members found in its bytes, and edited there: the edited bytes parse to exactly
// what editing the parsed object gives, whatever the spacing, order, nesting and escapes around them.

const RUN: MemberEdits = { drop: ['background'], set: { stream: true } }

const SPACES = ['', ' ', '\n', '\t ', '\r\n  ']
const VALUES: unknown[] = [
  true,
  false,
  null,
  0,
  -12.5e3,
  'plain',
  'quote " and \\ backslash, \\" and "\\',
  'é\u2028\n"{[,]}',
  [],
  [1, '{', { a: [{}] }],
  { nested: { background: true, stream: false }, list: ['"', ','] },
]

/** A JSON object text of `members`, spaced at random. */
function text(members: Array<[string, unknown]>, pick: (n: number) => number): string {
  const space = () => SPACES[pick(SPACES.length)] as string
  const parts = members.map(([key, value]) => `${space()}${JSON.stringify(key)}${space()}:${space()}${JSON.stringify(value)}${space()}`)
  return `${space()}{${parts.length === 0 ? space() : parts.join(',')}}${space()}`
}

describe('topLevelMembers', () => {
  it('finds each top-level member and the commas between them, not those nested or quoted', async () => {
    const source = '{ "a" : "x,}\\"y" , "b":{"c":[1,{"d":2}]},"background":true ,"e":-1.5e3}'
    const found = await topLevelMembers(Buffer.from(source))
    expect(found.members.map((m) => [m.key, source.slice(m.start, m.end)])).toEqual([
      ['a', '"a" : "x,}\\"y"'],
      ['b', '"b":{"c":[1,{"d":2}]}'],
      ['background', '"background":true'],
      ['e', '"e":-1.5e3'],
    ])
    expect(found.commas.map((at) => source[at])).toEqual([',', ',', ','])
    expect(found.members[1]?.valueStart).toBe(source.indexOf('{"c"'))
  })

  it('finds none in an empty object', async () => {
    expect(await topLevelMembers(Buffer.from(' { } '))).toEqual({ members: [], commas: [] })
  })
})

describe('editTopLevelMembers', () => {
  it('matches the parsed object edited, over 3000 generated objects', async () => {
    let checked = 0
    for (let seed = 1; seed <= 3000; seed++) {
      const gen = new Gen(seed)
      const pick = (n: number) => gen.int(n)
      const keys = ['model', 'input', 'background', 'stream', 'tools', 'x', 'background', 'stream']
      const members: Array<[string, unknown]> = []
      for (let n = pick(7); n > 0; n--) members.push([keys[pick(keys.length)] as string, VALUES[pick(VALUES.length)]])
      if (pick(2) === 0) members.splice(pick(members.length + 1), 0, ['background', true])
      const source = text(members, pick)
      const edited = await editTopLevelMembers(Buffer.from(source), RUN)
      // A set member with nowhere to go (no dropped member, or its value too short to hold `true`) is left to the caller.
      if (edited === undefined) continue
      expect(edited.length, `seed ${seed}: ${source}`).toBe(Buffer.byteLength(source))
      expect(JSON.parse(edited.toString('utf8')), `seed ${seed}: ${source}`).toEqual(editMembers(JSON.parse(source), RUN))
      checked++
    }
    // Most objects get a `background` member: the edit is checked on most of them.
    expect(checked).toBeGreaterThan(1500)
  })

  it('writes a client create as its upstream request: one member replaced in place, every other byte as sent', async () => {
    const source = '{"model":"gpt-4o-mini","background": true,"instructions":"a, \\"b\\""}'
    const bytes = Buffer.from(source)
    const edited = await editTopLevelMembers(bytes, RUN)
    expect(edited?.toString()).toBe('{"model":"gpt-4o-mini","stream":true     ,"instructions":"a, \\"b\\""}')
    // A copy: the bytes given stay as they were.
    expect(bytes.toString()).toBe(source)
  })

  it('blanks a dropped member and its comma where the set member is already there', async () => {
    const edited = await editTopLevelMembers(Buffer.from('{"stream":false,"input":"x","background":true}'), RUN)
    expect(edited?.toString()).toBe('{"stream":true ,"input":"x"                  }')
  })

  it('fits what it writes in bytes, not characters', async () => {
    // Five characters, eight bytes, where the value took seven: written, it would run over the closing brace.
    expect(await editTopLevelMembers(Buffer.from('{"x":"abcde"}'), { drop: [], set: { x: 'ééé' } })).toBeUndefined()
    const edited = await editTopLevelMembers(Buffer.from('{"x":"abcde"}'), { drop: [], set: { x: 'éé' } })
    expect(JSON.parse(edited?.toString() ?? '')).toEqual({ x: 'éé' })
  })

  it('edits the bytes themselves when asked', async () => {
    const bytes = Buffer.from('{"background":true,"input":"x"}')
    const edited = await editTopLevelMembers(bytes, RUN, true)
    expect(edited).toBe(bytes)
    expect(bytes.toString()).toBe('{"stream":true    ,"input":"x"}')
  })

  it('leaves to the caller what does not fit: a set member with no room, or none at all', async () => {
    expect(await editTopLevelMembers(Buffer.from('{"stream":0,"input":"x"}'), RUN)).toBeUndefined()
    expect(await editTopLevelMembers(Buffer.from('{"input":"x"}'), RUN)).toBeUndefined()
    expect(await editTopLevelMembers(Buffer.from('{"b":1}'), { drop: ['b'], set: { stream: true } })).toBeUndefined()
  })

  it('turns the event loop while it reads a body of megabytes', async () => {
    const big = { model: 'm', tools: Array.from({ length: 60_000 }, (_, i) => ({ name: `t${i}`, p: [i, '"}'] })), background: true }
    const source = JSON.stringify(big)
    const { result: edited, turns } = await turnsDuring(() => editTopLevelMembers(Buffer.from(source), RUN))
    expect(source.length).toBeGreaterThan(2 * 1024 * 1024)
    expect(JSON.parse(edited?.toString() ?? '')).toEqual(editMembers(big, RUN))
    expect(turns).toBeGreaterThan(4)
  })

  it('turns the event loop inside a long string full of escaped quotes', async () => {
    const source = JSON.stringify({ model: 'm', background: true, input: 'say "yes" '.repeat(300_000) })
    const { result: found, turns } = await turnsDuring(() => topLevelMembers(Buffer.from(source)))
    expect(found.members.map((m) => m.key)).toEqual(['model', 'background', 'input'])
    expect(found.members[2]?.end).toBe(source.length - 1)
    expect(turns).toBeGreaterThan(8)
  })
})
