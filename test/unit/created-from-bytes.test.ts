import { describe, expect, it } from 'vitest'
import { createdFromBytes } from '../../src/background/created-from-bytes.js'
import { keptEvent } from '../../src/background/kept-event.js'
import type { BackgroundFormat } from '../../src/dialects/index.js'
import { responsesBackground } from '../../src/dialects/openai/responses/background.js'
import { scanJsonBody } from '../../src/json/scan-body.js'
import { topLevelMembers } from '../../src/json/top-members.js'

// A large background create's created event written from the request's bytes: the same event, value for value, as
// the one written from the parsed request, with the big members' text copied from the bytes as the client wrote it.

const ID = 'resp_01JZ0000000000000000000000'
const AT = 1_700_000_000

/** What the created event of `body` is made of this way, or undefined where it falls back to a parse. */
async function fromBytes(body: string, format: BackgroundFormat = responsesBackground) {
  const bytes = Buffer.from(body)
  const { fields } = await scanJsonBody(bytes)
  return await createdFromBytes(format, ID, AT, bytes, fields, await topLevelMembers(bytes))
}

/** The created event's data, parsed. */
const dataOf = (sse: string) => JSON.parse(/^event: [^\n]*\ndata: ([^\n]*)\n\n$/.exec(sse)?.[1] ?? 'null') as unknown

const big = (unit: string) => unit.repeat(Math.ceil(100_000 / unit.length))
const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', name: `t${i}`, description: big('d').slice(0, 200) }))

describe('createdFromBytes', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    [
      'big instructions with every escape',
      { model: 'gpt-4o-mini', instructions: big('a\n\t"\\\u0001é🚀\u2028/'), input: 'x', background: true },
    ],
    ['big tools and instructions', { model: 'gpt-4o-mini', tools: tools(600), instructions: big('plain '), background: true }],
    ['a big input the object does not show', { model: 'gpt-4o-mini', input: [{ role: 'user', content: big('c') }], background: true }],
  ]
  for (const [name, request] of cases) {
    it(`writes the event the parsed request gives: ${name}`, async () => {
      const body = JSON.stringify(request, null, name.includes('tools') ? 1 : undefined)
      const made = await fromBytes(body)
      expect(made).toBeDefined()
      const whole = keptEvent(responsesBackground.createdEvent(responsesBackground.pending(ID, JSON.parse(body), AT)), 0)
      expect(dataOf(made?.text ?? '')).toEqual(dataOf(whole))
    })
  }

  it('copies the big members as the client wrote them, their line breaks as spaces: the event stays one data line', async () => {
    const list = tools(600)
    const spaced = JSON.stringify(list, null, '\r\n')
    const made = await fromBytes(`{"model":"gpt-4o-mini","tools":\n${spaced} ,"background":true}`)
    expect(made?.text.includes(`"tools":${spaced.replace(/[\r\n]/g, ' ')}`)).toBe(true)
    expect(made?.text.split('\n')).toHaveLength(4)
  })

  it('falls back where a big member is an object the format may read inside', async () => {
    expect(
      await fromBytes(JSON.stringify({ model: 'm', text: { format: { type: 'text' }, note: big('n') }, background: true })),
    ).toBeUndefined()
  })

  it('falls back where the format shows a stand-in changed, not whole', async () => {
    const slicing: BackgroundFormat = {
      ...responsesBackground,
      pending: (id, request, at) => ({
        ...responsesBackground.pending(id, request, at),
        instructions: String(request.instructions).slice(0, 12),
      }),
    }
    expect(await fromBytes(JSON.stringify({ model: 'm', instructions: big('i'), background: true }), slicing)).toBeUndefined()
    // Cut past its NUL, or before its nonce, alike.
    for (const cut of [(text: string) => text.slice(3), (text: string) => text.slice(0, 3)]) {
      const cutting: BackgroundFormat = {
        ...responsesBackground,
        pending: (id, request, at) => ({
          ...responsesBackground.pending(id, request, at),
          instructions: cut(String(request.instructions)),
        }),
      }
      expect(await fromBytes(JSON.stringify({ model: 'm', instructions: big('i'), background: true }), cutting)).toBeUndefined()
    }
  })

  it('is not used for a body with nothing too big for its skeleton', async () => {
    expect(await fromBytes(JSON.stringify({ model: 'm', instructions: 'short', background: true }))).toBeUndefined()
  })
})
