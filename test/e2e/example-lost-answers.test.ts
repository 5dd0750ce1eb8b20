import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { beforeAll, expect, it } from 'vitest'
import { ensureBuilt } from '../support/gateway-process.js'

// The guide's example (docs/guides/lost-answers.md) runs as a reader would run it, against the built package, and
// each tool it shows does what the guide says.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

beforeAll(() => ensureBuilt(), 240_000)

it('node examples/lost-answers.mjs: a background response, the client background mode, failover to another base URL, a recovered answer', {
  timeout: 60_000,
}, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['examples/lost-answers.mjs'], {
    cwd: ROOT,
    timeout: 50_000,
    env: { ...process.env, MOCK_DELAY_MS: '300' },
  })
  expect(stdout).toMatch(/^1\. background: created resp_\w+, status queued$/m)
  expect(stdout).toContain('retrieved: completed, "Echo: Hello in the background"')
  expect(stdout).toContain('2. client background mode: completed, "Echo: Hello through the client"')
  expect(stdout).toMatch(/^3\. alternate base URLs: network error at http:\/\/127\.0\.0\.1:\d+\/v1, on to http:\/\/127\.0\.0\.1:\d+\/v1$/m)
  expect(stdout).toContain('answered: "Echo: Hello over another address"')
  expect(stdout).toMatch(/kept as \w{26}: "Echo: Hello, I will not wait"/)
})
