import { expect, it } from 'vitest'
import { utf8TextInSlices } from '../../src/json/utf8.js'

// UTF-8 decoded a slice at a time gives the text decoding at once gives, whatever falls on a cut.

it('decodes text of every width a slice at a time, cutting before a character only', async () => {
  const text = 'aé€😀\u2028"\\'.repeat(5000)
  const bytes = Buffer.from(text)
  // Slices of every length from 1 to 9 bytes: cuts fall inside every kind of character.
  for (let slice = 1; slice < 10; slice++)
    expect(await utf8TextInSlices(bytes.subarray(0, 4000), slice)).toBe(bytes.subarray(0, 4000).toString())
  // Each turn of the loop runs one of these.
  let turns = 0
  let counting = true
  const tick = () => {
    if (!counting) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  expect(await utf8TextInSlices(bytes, 1024)).toBe(text)
  counting = false
  expect(turns).toBeGreaterThan(bytes.length / 1024 - 2)
})

it('copies ASCII at once, and decodes what fits a slice at once', async () => {
  const ascii = Buffer.from('plain text '.repeat(10_000))
  expect(await utf8TextInSlices(ascii, 1024)).toBe(ascii.toString())
  expect(await utf8TextInSlices(Buffer.from('é'), 1024)).toBe('é')
})
