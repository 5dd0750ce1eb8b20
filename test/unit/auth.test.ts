import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from 'vitest'
import { DIALECTS } from '../../src/dialects/index.js'
import { createAuthenticator } from '../../src/http/auth.js'

// Only `authenticate` reads the request; a fixed key list never does.
const req = {} as IncomingMessage

describe('a call without a key', () => {
  it.each(DIALECTS.map((dialect) => [dialect.name, dialect] as const))(
    "is told in its dialect's words where the key goes (%s)",
    async (_name, dialect) => {
      for (const authenticate of [createAuthenticator({ apiKeys: ['k'] }), createAuthenticator({ authenticate: () => ({ owner: 'o' }) })]) {
        const missing = async () => authenticate(undefined, req, dialect)
        await expect(missing()).rejects.toMatchObject({ code: 'invalid_api_key', message: `Missing API key: send ${dialect.keyHint}.` })
      }
    },
  )
})
