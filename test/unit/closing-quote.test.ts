import { describe, expect, it } from 'vitest'
import { closingQuote } from '../../src/json/quote.js'
import { Gen } from '../support/json-corpus.js'

// The end of a JSON string found from its opening quote, by a short scan or the buffer's search past it: every string
// JSON.stringify can write, of every length around where the one hands over to the other, with backslash runs on
// both sides of that point.

const PIECES = ['a', ' ', '"', '\\', '\\\\', '\\"', 'é', '\n', '\u2028', '😀', '{', ',']

describe('closingQuote', () => {
  it('finds where JSON.stringify ended the string, for 4 000 strings of 0 to 200 characters', () => {
    for (let seed = 1; seed <= 4000; seed++) {
      const gen = new Gen(seed)
      const pick = (n: number) => gen.int(n)
      const length = pick(200)
      let value = ''
      while (value.length < length) value += PIECES[pick(PIECES.length)]
      const before = ' '.repeat(pick(3))
      const literal = JSON.stringify(value)
      const b = Buffer.from(`${before}${literal}, "next": "x"`, 'utf8')
      const open = before.length
      const close = closingQuote(b, open)
      expect(close, `seed ${seed}`).toBe(open + Buffer.byteLength(literal) - 1)
    }
  })

  it('treats a backslash run that straddles the scan limit as a run', () => {
    for (let at = 55; at <= 75; at++) {
      for (const run of [1, 2, 3, 4]) {
        // `run` backslashes ending at `at`, then a quote: escaped when the run is odd.
        const inside = `${'x'.repeat(at - run)}${'\\'.repeat(run)}"`
        const text = `"${inside}${run % 2 === 1 ? 'tail"' : ''}`
        const b = Buffer.from(text)
        const expected = run % 2 === 1 ? text.length - 1 : at + 1
        expect(closingQuote(b, 0), `quote after ${run} backslashes at ${at}`).toBe(expected)
      }
    }
  })

  it('says -1 for a string that never closes, short or long, and one ending in a backslash', () => {
    expect(closingQuote(Buffer.from('"abc'), 0)).toBe(-1)
    expect(closingQuote(Buffer.from(`"${'a'.repeat(500)}`), 0)).toBe(-1)
    expect(closingQuote(Buffer.from('"abc\\"'), 0)).toBe(-1)
    expect(closingQuote(Buffer.from(`"${'a'.repeat(63)}\\`), 0)).toBe(-1)
    expect(closingQuote(Buffer.from(`"${'a'.repeat(100)}\\"`), 0)).toBe(-1)
  })
})
