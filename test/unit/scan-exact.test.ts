import { describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import { BIG_STRING, scanJsonObject } from '../../src/json/scan-body.js'

describe('scanJsonObject exactStrings', () => {
  const bigModel = Buffer.from(JSON.stringify({ model: 'm'.repeat(100), messages: [{ role: 'user', content: 'x'.repeat(200) }] }))

  it('stands in for a big string it was not asked to keep', async () => {
    expect((await scanJsonObject(bigModel, { smallValueBytes: 16 })).model).toBe(BIG_STRING)
  })

  it('refuses a big string it must keep exactly, naming the member, with no stand-in anywhere', async () => {
    const error = await scanJsonObject(bigModel, { smallValueBytes: 16, exactStrings: ['model'] }).catch((e: unknown) => e)
    expect(isGatewayError(error) && error.code).toBe('invalid_request')
    expect(isGatewayError(error) && error.param).toBe('model')
    expect((error as Error).message).toBe("'model' is longer than 16 bytes.")
  })

  it('keeps small exact members as they are, and nested members of that name are not top-level', async () => {
    const body = Buffer.from(JSON.stringify({ model: 'gpt', tools: [{ model: 'n'.repeat(100) }] }))
    expect((await scanJsonObject(body, { smallValueBytes: 16, exactStrings: ['model'] })).model).toBe('gpt')
  })
})
