import { describe, expect, it } from 'vitest'
import { bodyOfBytes, SCAN_FROM_BYTES } from '../../src/http/read-body.js'
import { requestBodyHash } from '../../src/json/hash.js'
import { bodyHash } from '../../src/recovery/body-hash.js'
import { turnsDuring } from '../support/loop-turns.js'

const RULES = { maxDepth: 1000, singleKeys: new Set(['model', 'messages']) }

/** Just under 1 MiB of arrays nested 990 deep (within `limits.maxJsonDepth`), beside a valid chat request. */
function deepBody(): Buffer {
  const chain = `${'['.repeat(989)}${']'.repeat(989)}`
  const head = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":['
  const count = Math.floor((SCAN_FROM_BYTES - head.length - 100) / (chain.length + 1))
  return Buffer.from(`${head}${Array(count).fill(chain).join(',')}]}`)
}

describe('a body under 1 MiB that is costly to parse', () => {
  it('is scanned in slices with turns of the loop between them, never parsed whole on the loop', async () => {
    const bytes = deepBody()
    expect(bytes.length).toBeLessThan(SCAN_FROM_BYTES)
    const { result: body, turns } = await turnsDuring(() => bodyOfBytes(bytes, RULES, {}))
    // Parsed whole, it would hold the loop for one long turn; scanned, it yields every 256 KiB.
    expect(turns).toBeGreaterThanOrEqual(3)
    expect(body.value).toBeUndefined()
    expect(body.fields.model).toBe('gpt-4o-mini')
    // Its hash is taken from the bytes on the hash worker, and is the hash of the parsed body.
    expect(await bodyHash(body, 'owner')).toBe(requestBodyHash(bytes))
  })

  it('still parses a small body of a few containers whole, and refuses one nested past the limit', async () => {
    const small = Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}')
    expect((await bodyOfBytes(small, RULES, {})).value).toEqual(JSON.parse(small.toString()))
    const tooDeep = Buffer.from(`{"model":"m","x":${'['.repeat(1001)}${']'.repeat(1001)}}`)
    await expect(bodyOfBytes(tooDeep, RULES, {})).rejects.toThrow('deeper than 1000 levels (limits.maxJsonDepth)')
  })
})
