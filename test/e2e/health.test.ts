import type Keyv from 'keyv'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { type Fixture, startFixture } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { describeWithRedis, killAllOwnRedis, killOwnRedis, recommendedKeyv, startOwnRedis } from '../support/redis.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]
const UNDER_AI = NODE_KINDS[1] as (typeof NODE_KINDS)[number]
const fixtures: Fixture[] = []

afterAll(async () => {
  for (const fx of fixtures.splice(0)) await fx.close()
  await killAllOwnRedis()
})

async function start(kind = NODE, store?: Keyv): Promise<Fixture> {
  const fx = await startFixture(kind, store ? { store } : {})
  fixtures.push(fx)
  return fx
}

describe('GET /v1/health and gateway.status()', () => {
  it('answer ok without a key, uncached, with a request id; other methods get 405', async () => {
    const fx = await start()
    const res = await call(`${fx.url}/v1/health`)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ status: 'ok', store: 'ok' })
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['x-request-id']).toMatch(/^[0-9A-Z]{26}$/)
    expect(await fx.gateway.status()).toMatchObject({ status: 'ok', store: 'ok' })
    const post = await call(`${fx.url}/v1/health`, { body: {} })
    expect(post.status).toBe(405)
    expect(post.headers.allow).toBe('GET')
  })

  it('are served under a mount prefix like every route', async () => {
    const fx = await start(UNDER_AI)
    expect((await call(`${fx.url}/v1/health`)).json).toEqual({ status: 'ok', store: 'ok' })
  })

  it('say degraded once the gateway closes', async () => {
    const fx = await start()
    await fx.gateway.close()
    expect(await fx.gateway.status()).toMatchObject({ status: 'degraded', store: 'unavailable' })
  })
})

await describeWithRedis('health with a Redis store', () => {
  it('is ok while Redis is up, 503 degraded once it is gone, and ok again when it is back', async () => {
    const port = await freePort()
    const url = `redis://127.0.0.1:${port}`
    let redis = await startOwnRedis(port)
    const fx = await start(NODE, recommendedKeyv(`health-${port}`, url))
    const up = await call(`${fx.url}/v1/health`)
    expect(up.status).toBe(200)
    expect(up.json).toEqual({ status: 'ok', store: 'ok' })

    await killOwnRedis(redis)
    // The client notices the lost connection on its own: polled, never timed.
    const down = await eventually(async () => {
      const res = await call(`${fx.url}/v1/health`)
      return res.status === 503 ? res : undefined
    })
    expect(down.json).toEqual({ status: 'degraded', store: 'unavailable' })
    expect(await fx.gateway.status()).toMatchObject({ status: 'degraded', store: 'unavailable' })

    redis = await startOwnRedis(port)
    await eventually(async () => (await call(`${fx.url}/v1/health`)).status === 200, 10_000)
    await killOwnRedis(redis)
  })
})
