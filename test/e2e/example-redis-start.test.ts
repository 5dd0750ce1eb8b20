import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { beforeAll, expect, it } from 'vitest'
import { ensureBuilt } from '../support/gateway-process.js'
import { closedPort } from '../support/http.js'

// The Redis example, started as a reader would start it with a REDIS_URL that cannot work: it says why and exits,
// instead of a bare "Invalid URL" or a gateway that starts and fails on its first call.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

beforeAll(() => ensureBuilt(), 240_000)

/** Runs `node examples/redis-server.mjs` with `REDIS_URL`: its exit code and what it wrote to stderr. */
async function start(redisUrl: string): Promise<{ code: number; err: string }> {
  const child = spawn(process.execPath, ['examples/redis-server.mjs'], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: redisUrl, PORT: '0', OPENAI_API_KEY: '', MOCK_DELAY_MS: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const [code] = await once(child, 'exit')
  return { code: code as number, err }
}

it('a REDIS_URL without its scheme is named, with the form it needs', async () => {
  const { code, err } = await start('127.0.0.1:6379')
  expect(code).toBe(1)
  expect(err).toBe("REDIS_URL '127.0.0.1:6379' needs its scheme: redis://host:port (rediss:// for TLS).\n")
}, 30_000)

it('a Redis that cannot be reached fails the start through gateway.ready()', async () => {
  const url = `redis://127.0.0.1:${await closedPort()}`
  const { code, err } = await start(url)
  expect(code).toBe(1)
  expect(err).toContain(`The store cannot be reached: Redis is not connected (waited up to 2000 ms). (REDIS_URL ${url})`)
}, 30_000)
