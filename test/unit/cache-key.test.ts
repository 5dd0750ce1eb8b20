import { describe, expect, it } from 'vitest'
import { mulberry32 } from '../../bench/lib/random.mjs'
import { cacheKey, FRAMING_FIELDS, type KeyedCall } from '../../src/cache/key.js'
import { fingerprint, KeyMemo, MEMO_BODY_BYTES } from '../../src/cache/key-memo.js'
import { messagesRequest } from '../../src/dialects/anthropic/messages/wire.js'
import { geminiRequest } from '../../src/dialects/gemini/generate-content/wire.js'
import { chatRequest } from '../../src/dialects/openai/chat-completions/wire.js'
import { responsesRequest } from '../../src/dialects/openai/responses/wire.js'
import { canonicalBodyPiecesWithout, canonicalJson, hashOfPieces, requestBodyHash } from '../../src/json/hash.js'
import { hashOnce } from '../../src/recovery/body-hash.js'
import type { Operation } from '../../src/types.js'

// A property test of the key: over every member of each dialect's request schema, two bodies that differ in that
// one member (absent, or another random value) never share a key; order, spacing and the framing fields never split
// one. Bodies are generated from a seeded generator, so a failure names a seed that reproduces it.

/** A random JSON value, nested at most `depth` deep. */
function value(next: () => number, depth = 2): unknown {
  const kind = Math.floor(next() * (depth > 0 ? 7 : 5))
  switch (kind) {
    case 0:
      return Math.floor(next() * 1000) / (next() < 0.5 ? 1 : 8)
    case 1:
      return next() < 0.5
    case 2:
      return null
    case 3:
      return `s${Math.floor(next() * 1e6)}`
    case 4:
      return ['low', 'medium', 'high', 'auto', 'none', ''][Math.floor(next() * 6)]
    case 5:
      return Array.from({ length: 1 + Math.floor(next() * 3) }, () => value(next, depth - 1))
    default: {
      const object: Record<string, unknown> = {}
      for (let i = 0; i < 1 + Math.floor(next() * 3); i++) object[`k${Math.floor(next() * 20)}`] = value(next, depth - 1)
      return object
    }
  }
}

/** A call of `body` as the key sees it: hashed as the gateway hashes a body it parsed whole. */
function callOf(body: Record<string, unknown>, operation: Operation, owner = 'owner-a'): KeyedCall {
  return {
    owner,
    operation,
    stream: body.stream === true,
    requestHash: () => Promise.resolve(requestBodyHash(body)),
    body: { value: body, fields: body },
    model: { id: 'model-x', upstreamModel: 'upstream-x', upstream: { name: 'up' } },
    bodies: { operationFor: () => operation },
  }
}

const keyOf = async (body: Record<string, unknown>, operation: Operation, owner?: string) =>
  (await cacheKey(callOf(body, operation, owner), false)).id

/** Each dialect's request schema, with a body that is valid on its face for the members not under test. */
const SCHEMAS = [
  {
    name: 'chat completions',
    operation: 'chat.completions',
    known: chatRequest.known,
    base: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  },
  { name: 'Responses', operation: 'responses', known: responsesRequest.known, base: { model: 'm', input: 'hi' } },
  {
    name: 'Messages',
    operation: 'messages',
    known: messagesRequest.known,
    base: { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  },
  {
    name: 'generate-content',
    operation: 'generateContent',
    known: geminiRequest.known,
    base: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
  },
] as const

describe('the cache key', () => {
  for (const schema of SCHEMAS) {
    const members = [...schema.known].filter((name) => !FRAMING_FIELDS.includes(name))

    it(`${schema.name}: a body differing in any one member of the schema (${members.length}) gets another key`, async () => {
      expect(members.length).toBeGreaterThan(5)
      for (const [i, member] of members.entries()) {
        const next = mulberry32(1000 * i + 7)
        for (let round = 0; round < 20; round++) {
          const a: Record<string, unknown> = { ...schema.base }
          const b: Record<string, unknown> = { ...schema.base }
          a[member] = value(next)
          // Absent, or another value.
          if (round % 4 === 0) delete b[member]
          else b[member] = value(next)
          if (canonicalJson(a) === canonicalJson(b)) continue
          expect(await keyOf(a, schema.operation), `${member}, round ${round}`).not.toBe(await keyOf(b, schema.operation))
        }
      }
    })

    it(`${schema.name}: member order, spacing and the framing fields never split a key`, async () => {
      const next = mulberry32(42)
      for (let round = 0; round < 30; round++) {
        const body: Record<string, unknown> = { ...schema.base }
        for (const member of members) if (next() < 0.3) body[member] = value(next)
        const reordered = Object.fromEntries(Object.entries(body).reverse())
        const reparsed = JSON.parse(JSON.stringify(reordered, null, 3)) as Record<string, unknown>
        const framed = { ...reparsed, stream: true, stream_options: { include_usage: true } }
        const key = await keyOf(body, schema.operation)
        expect(await keyOf(reparsed, schema.operation)).toBe(key)
        expect(await keyOf(framed, schema.operation)).toBe(key)
      }
    })
  }

  it('the owner, the operation and the upstream target are part of it; a shared key names no owner', async () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
    const base = callOf(body, 'chat.completions')
    const key = (await cacheKey(base, false)).id
    expect((await cacheKey(callOf(body, 'chat.completions', 'owner-b'), false)).id).not.toBe(key)
    expect((await cacheKey(callOf(body, 'responses'), false)).id).not.toBe(key)
    expect((await cacheKey({ ...base, model: { ...base.model, upstreamModel: 'other' } }, false)).id).not.toBe(key)
    expect((await cacheKey({ ...base, model: { ...base.model, upstream: { name: 'other' } } }, false)).id).not.toBe(key)
    expect((await cacheKey(callOf(body, 'chat.completions', 'owner-b'), true)).id).toBe((await cacheKey(base, true)).id)
  })

  it("a streamed body's canonical form is made once: its own request_body_hash comes with the key", async () => {
    const body = { stream: true, model: 'm', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'once' }] }
    let hashed = 0
    const requestHash = hashOnce({ bytes: Buffer.from(JSON.stringify(body)), value: body }, 'owner-a')
    const counted = Object.assign(
      () => {
        hashed++
        return requestHash()
      },
      { asked: requestHash.asked, seed: requestHash.seed },
    )
    const key = await cacheKey({ ...callOf(body, 'chat.completions'), requestHash: counted }, false)
    // Nothing asked the call's hash to be computed, yet it is known, and is the hash of the whole body.
    expect(hashed).toBe(0)
    expect(requestHash.asked?.()).toBe(true)
    expect(await requestHash()).toBe(requestBodyHash(body))
    expect(key.id).toBe((await cacheKey(callOf(body, 'chat.completions'), false)).id)
  })

  it('the hashes of one canonical pass are those of the body and of the body without its framing members', () => {
    const large = 'x'.repeat(70_000)
    for (const body of [
      { stream: true, model: 'm' },
      { model: 'm', stream: false, stream_options: {}, z: 1 },
      { a: large, stream: true, b: large, messages: [large] },
      { stream: true },
      { m: 1 },
    ]) {
      const [all, without] = canonicalBodyPiecesWithout(body, FRAMING_FIELDS, Number.POSITIVE_INFINITY)
      const rest = Object.fromEntries(Object.entries(body).filter(([name]) => !FRAMING_FIELDS.includes(name)))
      expect(hashOfPieces(all)).toBe(requestBodyHash(body))
      expect(hashOfPieces(without)).toBe(requestBodyHash(rest))
      expect(without.join('')).toBe(canonicalJson(rest))
      // The small-body writer gives the same two forms.
      const [smallAll, smallWithout] = canonicalBodyPiecesWithout(body, FRAMING_FIELDS, 0)
      expect([smallAll.join(''), smallWithout.join('')]).toEqual([all.join(''), without.join('')])
    }
  })

  describe('the memo of recent keys by their bytes', () => {
    /** A call as the gateway has it, bytes and all, whose own hash counts how often it is worked out. */
    function counted(body: Record<string, unknown>, owner = 'owner-a', operation: Operation = 'chat.completions') {
      const bytes = Buffer.from(JSON.stringify(body))
      const tally = { hashed: 0, walked: 0 }
      // The body's members listed: what making its canonical form does, and what a remembered key skips.
      const value = new Proxy(body, {
        ownKeys(target) {
          tally.walked++
          return Reflect.ownKeys(target)
        },
      })
      const own = hashOnce({ bytes, value }, owner)
      const requestHash = Object.assign(
        () => {
          tally.hashed++
          return own()
        },
        { asked: own.asked, seed: own.seed },
      )
      return { call: { ...callOf(body, operation, owner), requestHash, body: { value, fields: value, bytes } }, own, tally }
    }

    it('gives every call the key it would get without it, and one remembered (a hit) from its bytes, its own hash with it', async () => {
      const memo = new KeyMemo(1024 * 1024)
      for (const schema of SCHEMAS) {
        const next = mulberry32(99)
        const members = [...schema.known].filter((name) => !FRAMING_FIELDS.includes(name))
        for (let round = 0; round < 20; round++) {
          const body: Record<string, unknown> = { ...schema.base, ...(round % 2 === 0 ? { stream: true } : {}) }
          for (const member of members) if (next() < 0.3) body[member] = value(next)
          for (const shared of [false, true]) {
            const plain = (await cacheKey(callOf(body, schema.operation), shared)).id
            const first = counted(body, 'owner-a', schema.operation)
            const seen = await cacheKey(first.call, shared, memo)
            expect(seen.id).toBe(plain)
            // Only looked up until it is remembered (a hit): a second look without it works the key out again.
            const unremembered = counted(body, 'owner-a', schema.operation)
            await cacheKey(unremembered.call, shared, memo)
            expect(unremembered.tally.walked).toBeGreaterThan(0)
            seen.remember?.()
            const again = counted(body, 'owner-a', schema.operation)
            expect((await cacheKey(again.call, shared, memo)).id).toBe(plain)
            // Known by its bytes: no canonical form made, and its own hash is there, right, for whoever asks.
            expect(again.tally.hashed).toBe(0)
            expect(again.tally.walked).toBe(0)
            expect(again.own.asked?.()).toBe(true)
            expect(await again.own()).toBe(requestBodyHash(body))
          }
        }
      }
    })

    it("keeps each owner's calls apart, and a body differing by one byte is worked out anew", async () => {
      const memo = new KeyMemo(1024 * 1024)
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
      ;(await cacheKey(counted(body).call, false, memo)).remember?.()
      const other = counted(body, 'owner-b')
      expect((await cacheKey(other.call, false, memo)).id).toBe((await cacheKey(callOf(body, 'chat.completions', 'owner-b'), false)).id)
      expect(other.tally.walked).toBeGreaterThan(0)
      const changed = counted({ ...body, messages: [{ role: 'user', content: 'hj' }] })
      await cacheKey(changed.call, false, memo)
      expect(changed.tally.walked).toBeGreaterThan(0)
    })

    it('looks up only bodies of a length it holds one of, and forgets a length once its last body went', async () => {
      const memo = new KeyMemo(4_000)
      const body = { model: 'm', messages: [{ role: 'user', content: 'remembered' }] }
      const length = Buffer.byteLength(JSON.stringify(body))
      expect(memo.mayHold(length)).toBe(false)
      ;(await cacheKey(counted(body).call, false, memo)).remember?.()
      expect(memo.mayHold(length)).toBe(true)
      // Bodies of other lengths push it out, least recently used first.
      for (let i = 0; i < 40; i++) (await cacheKey(counted({ model: 'm', pad: 'p'.repeat(100 + i) }).call, false, memo)).remember?.()
      expect(memo.mayHold(length)).toBe(false)
      const again = counted(body)
      expect((await cacheKey(again.call, false, memo)).id).toBe((await cacheKey(callOf(body, 'chat.completions'), false)).id)
      expect(again.tally.walked).toBeGreaterThan(0)
      // Remembered anew, and the same length with other bytes is looked up but worked out.
      ;(await cacheKey(counted(body).call, false, memo)).remember?.()
      expect(memo.mayHold(length)).toBe(true)
      const sameLength = counted({ model: 'm', messages: [{ role: 'user', content: 'rememberex' }] })
      await cacheKey(sameLength.call, false, memo)
      expect(sameLength.tally.walked).toBeGreaterThan(0)
    })

    it('tells apart bodies of one length that share a fingerprint, by their bytes, and holds both', async () => {
      // Two bodies of one length with one fingerprint, found by trying (a 30-bit fingerprint: tens of thousands of tries).
      const seen = new Map<number, Record<string, unknown>>()
      let pair: [Record<string, unknown>, Record<string, unknown>] | undefined
      for (let i = 0; pair === undefined && i < 1_000_000; i++) {
        const body = { model: 'm', n: String(i).padStart(7, '0') }
        const print = fingerprint(Buffer.from(JSON.stringify(body)))
        const earlier = seen.get(print)
        if (earlier) pair = [earlier, body]
        else seen.set(print, body)
      }
      expect(pair).toBeDefined()
      const [first, second] = pair!
      const memo = new KeyMemo(1024 * 1024)
      ;(await cacheKey(counted(first).call, false, memo)).remember?.()
      // Not the first's key: its bytes differ.
      const other = counted(second)
      expect((await cacheKey(other.call, false, memo)).id).toBe((await cacheKey(callOf(second, 'chat.completions'), false)).id)
      expect(other.tally.walked).toBeGreaterThan(0)
      ;(await cacheKey(counted(second).call, false, memo)).remember?.()
      for (const body of [first, second]) {
        const again = counted(body)
        expect((await cacheKey(again.call, false, memo)).id).toBe((await cacheKey(callOf(body, 'chat.completions'), false)).id)
        expect(again.tally.walked).toBe(0)
      }
    })

    it(`holds no more than its bound, and no body over ${MEMO_BODY_BYTES} bytes`, async () => {
      const memo = new KeyMemo(20_000)
      for (let i = 0; i < 500; i++) (await cacheKey(counted({ model: 'm', n: i, pad: 'p'.repeat(50) }).call, false, memo)).remember?.()
      expect(memo.heldBytes).toBeGreaterThan(10_000)
      expect(memo.heldBytes).toBeLessThanOrEqual(20_000)
      const large = { model: 'm', text: 'x'.repeat(MEMO_BODY_BYTES) }
      const big = new KeyMemo(10 * MEMO_BODY_BYTES)
      ;(await cacheKey(counted(large).call, false, big)).remember?.()
      const again = counted(large)
      await cacheKey(again.call, false, big)
      expect(again.tally.walked).toBeGreaterThan(0)
      expect(big.heldBytes).toBe(0)
    })
  })
})
