import { randomUUID } from 'node:crypto'
import { createKeyv } from '@keyv/redis'
import { afterEach, describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import type { Gateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { collectingGateway } from '../support/collecting-gateway.js'
import { closedPort } from '../support/http.js'
import { describeWithRedis, recommendedKeyv } from '../support/redis.js'

const opened: Gateway[] = []
afterEach(async () => {
  for (const gateway of opened.splice(0)) await gateway.close()
})

/** A gateway on `store` (the default in-memory one when undefined), closed after the test. */
function gatewayOn(store?: GatewayOptions['store']): Gateway {
  const { gateway } = collectingGateway({
    upstreams: { up: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
    models: [{ id: 'm', upstream: 'up' }],
    ...(store ? { store } : {}),
  })
  opened.push(gateway)
  return gateway
}

/** The error `promise` rejects with (failing the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error, 'ready() should reject').toBeInstanceOf(Error)
  return error as Error
}

describe('gateway.ready()', () => {
  it('resolves at once on the default in-memory store', async () => {
    await expect(gatewayOn().ready()).resolves.toBeUndefined()
  })

  it('rejects with store_unavailable, naming why, when Redis cannot be reached (the recommended settings)', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`
    const error = await rejection(gatewayOn(recommendedKeyv(`ready-${randomUUID()}`, url)).ready())
    expect(isGatewayError(error) && error.code).toBe('store_unavailable')
    expect(error.message).toMatch(/^The store cannot be reached: Redis is not connected/)
  })

  it('rejects too with a plain createKeyv(url), whose client queues commands and reconnects without end', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`
    const keyv = createKeyv(url, { namespace: `ready-${randomUUID()}` })
    keyv.on('error', () => {})
    const error = await rejection(gatewayOn(keyv).ready())
    expect(isGatewayError(error) && error.code).toBe('store_unavailable')
  })

  it('rejects once the gateway is closed', async () => {
    const gateway = gatewayOn()
    await gateway.close()
    const error = await rejection(gateway.ready())
    expect(isGatewayError(error) && error.code).toBe('store_unavailable')
  })
})

await describeWithRedis('gateway.ready() on a reachable Redis', () => {
  it('resolves once the store answers', async () => {
    await expect(gatewayOn(recommendedKeyv(`ready-${randomUUID()}`)).ready()).resolves.toBeUndefined()
  })
})
