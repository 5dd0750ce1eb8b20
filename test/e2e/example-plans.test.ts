import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { beforeAll, expect, it } from 'vitest'
import { ensureBuilt } from '../support/gateway-process.js'
import { freshMinute } from '../support/ledger.js'

// The plans example, run as a reader would run it: a free user is refused past its plan, a pro user is not.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

beforeAll(() => ensureBuilt(), 240_000)

it('node examples/plans.mjs gives the free user 3 calls a minute and the pro user all five', async () => {
  await freshMinute()
  const child = spawn(process.execPath, ['examples/plans.mjs'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', EXIT_AFTER_DEMO: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const [code] = await once(child, 'exit')
  expect(err).toBe('')
  expect(code).toBe(0)
  expect(out).toMatch(/ada \(free\): 200 200 200 429 429; this minute 3 calls/)
  expect(out).toMatch(/ada: 429 "Rate limit reached: requests per minute\. Try again in \d+ s\." \(retry-after \d+ s\)/)
  expect(out).toMatch(/grace \(pro\): 200 200 200 200 200; this minute 5 calls/)
  expect(out).toMatch(/usage \S+: \d+ in, \d+ out, \d+ n\$/)
}, 60_000)
