import { isUtf8 } from 'node:buffer'
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { canonicalByteHashing } from '../../src/json/canonical-bytes.js'
import { canonicalOutput } from '../../src/json/canonical-out.js'
import { requestBodyHash } from '../../src/json/hash.js'
import { documentText, Gen, mutate, SPECIAL_TEXTS } from '../support/json-corpus.js'

const hashing = canonicalByteHashing({ createHash, output: canonicalOutput() })

/** The byte hasher's answer in slices of `slice` bytes, or the error it threw. */
function byteHash(bytes: Buffer, slice: number): string | Error {
  try {
    const job = hashing.start(bytes)
    while (!job.step(slice)) {}
    return job.result()
  } catch (error) {
    return error as Error
  }
}

/** The main thread's answer, or the error it threw. */
function valueHash(bytes: Buffer): string | Error {
  try {
    return requestBodyHash(bytes)
  } catch (error) {
    return error as Error
  }
}

function agree(bytes: Buffer): void {
  // Bytes that are not UTF-8 the worker hashes as decoded text (the gateway refuses them before hashing).
  if (!isUtf8(bytes)) return
  const expected = valueHash(bytes)
  for (const slice of [1, 7, 1 << 20]) {
    const got = byteHash(bytes, slice)
    if (typeof expected === 'string') expect(got, bytes.toString()).toBe(expected)
    else expect(got, bytes.toString()).toBeInstanceOf(Error)
  }
}

describe('canonicalByteHashing', () => {
  it('hashes every document of a seeded corpus, and its mutations, exactly as requestBodyHash does, in any slicing', () => {
    for (const seed of [20261122, 20261126, 7]) {
      const g = new Gen(seed)
      for (let k = 0; k < 400; k++) {
        const bytes = Buffer.from(documentText(g))
        agree(bytes)
        agree(mutate(g, bytes))
      }
    }
    for (const text of SPECIAL_TEXTS) agree(Buffer.from(text))
  })

  it('agrees on the forms it copies, rewrites or views: numbers, escapes, duplicate and non-BMP keys, big strings', () => {
    const big = 'x'.repeat(10_000)
    for (const text of [
      '{"n":[0,-0,1.0,1e2,1E-7,123456789012345678,-12,0.1,1e400,-1e-400,5e-324]}',
      '{"s":"a\\u00e9\\n\\/\\"","k\\u0061":1,"a":2}',
      '{"b":1,"a":{"d":[1,{"z":1,"y":2}],"c":2},"b":3}',
      '{" a":1,"":2,"a":3,"a ":4,"\\u0000":5,"é":6}',
      '{"\uffff":1,"\u{1f600}":2,"\ue000":3}',
      `{"big":"${big}","arr":["${big}",{"k":"${big}"}],"o":{"v":"${big}"}}`,
      `[[[${'['.repeat(900)}${']'.repeat(900)}]]]`,
      '"top"',
      ' 12 ',
    ]) {
      agree(Buffer.from(text))
    }
  })
})
