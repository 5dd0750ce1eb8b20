import { createHash } from 'node:crypto'
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { sigv4Authorizer } from '../../src/dialects/bedrock/sigv4.js'
import type { OutgoingRequest } from '../../src/upstream/authorize.js'

// The Bedrock authorizer keeps a signer per set of credentials and the day's derived key, and hands the library the
// body's hash: its signatures must stay exactly the library's own, day after day and across a rotation.

const FIRST = { accessKeyId: 'AKIAFIRST0000000001', secretAccessKey: 'first/secret/key/000000000000000000000' }
const SECOND = { accessKeyId: 'AKIASECOND000000002', secretAccessKey: 'second/secret/key/00000000000000000000' }
const BODY = Buffer.from('{"anthropic_version":"bedrock-2023-05-31","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}')
const HOST = 'bedrock-runtime.us-east-1.amazonaws.com'
const PATH = '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke'

const request = (): OutgoingRequest =>
  ({ method: 'POST', origin: `https://${HOST}`, path: PATH, headers: ['content-type', 'application/json'], body: BODY }) as OutgoingRequest

/** The headers `@smithy/signature-v4`, used plainly, signs the same request with at `date`. */
async function librarySigned(credentials: typeof FIRST, date: Date): Promise<Record<string, string>> {
  const signer = new SignatureV4({ service: 'bedrock', region: 'us-east-1', sha256: Hash.bind(null, 'sha256'), credentials })
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'https:',
      hostname: HOST,
      path: PATH,
      query: {},
      headers: { host: HOST, 'content-type': 'application/json' },
      body: BODY,
    },
    { signingDate: date },
  )
  return signed.headers
}

/** The headers the authorizer added, by name. */
const added = (req: OutgoingRequest) =>
  Object.fromEntries(req.headers.slice(2).flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]]] : [])))

afterEach(() => {
  vi.useRealTimers()
})

describe('the SigV4 authorizer', () => {
  it("signs as the library does, on one day and the next, and with other credentials; the body's hash is the sent bytes'", async () => {
    let current = FIRST
    const authorizer = sigv4Authorizer('t', { region: 'us-east-1', credentials: async () => ({ ...current }) })
    vi.useFakeTimers({ toFake: ['Date'] })
    for (const at of ['2026-11-28T23:59:58Z', '2026-11-28T23:59:59Z', '2026-11-29T00:00:01Z']) {
      vi.setSystemTime(new Date(at))
      const req = request()
      await authorizer.authorize(req)
      const mine = added(req)
      expect(mine['x-amz-content-sha256']).toBe(createHash('sha256').update(BODY).digest('hex'))
      expect(mine.authorization).toBe((await librarySigned(FIRST, new Date(at))).authorization)
    }
    // Other credentials get their own signer and key (rotation within one upstream: test/e2e/bedrock/credentials.test.ts).
    current = SECOND
    const rotated = sigv4Authorizer('t', { region: 'us-east-1', credentials: async () => ({ ...current }) })
    const req = request()
    await rotated.authorize(req)
    expect(added(req).authorization).toBe((await librarySigned(SECOND, new Date('2026-11-29T00:00:01Z'))).authorization)
  })
})
