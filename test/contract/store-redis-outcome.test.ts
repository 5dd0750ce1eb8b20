import type KeyvRedis from '@keyv/redis'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { writeRecord } from '../../src/recovery/writer.js'
import { createGatewayStore } from '../../src/store/gateway-store.js'
import type { GatewayLogger } from '../../src/types.js'
import { eventually } from '../support/http.js'
import { describeWithRedis, killAllOwnRedis, recommendedKeyv, startOwnRedis } from '../support/redis.js'
import { makeRecord, newOwner } from './store-contract.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function recordingLogger() {
  const lines: Array<{ level: string; message: string; requestId: unknown }> = []
  const log = (level: string) => (message: string, meta?: Record<string, unknown>) =>
    lines.push({ level, message, requestId: meta?.requestId })
  const logger: GatewayLogger = { info: log('info'), warn: log('warn'), error: log('error') }
  return { logger, lines }
}

await describeWithRedis('recovery writes when Redis misbehaves', () => {
  afterAll(killAllOwnRedis)

  describe('a Redis frozen through every attempt', () => {
    it('logs the write as unconfirmed, then as stored once Redis wakes and the writes land', async () => {
      const port = await freePort()
      const redis = await startOwnRedis(port)
      const keyv = recommendedKeyv('outcome', `redis://127.0.0.1:${port}`)
      const store = createGatewayStore({ keyv, timeoutMs: 300, onError: () => {} })
      const owner = newOwner()
      await store.put(owner, makeRecord(), 60_000)
      const { logger, lines } = recordingLogger()
      const record = makeRecord()
      redis.kill('SIGSTOP')
      try {
        expect(await writeRecord(store, owner, record, 60_000, logger, { verifyAfterMs: 1000 })).toBe(false)
        expect(lines).toEqual([{ level: 'warn', message: expect.stringContaining('not confirmed'), requestId: record.request_id }])
      } finally {
        redis.kill('SIGCONT')
      }
      await eventually(() => lines.length === 2, 8000)
      expect(lines[1]).toEqual({ level: 'warn', message: 'model-gateway: recovery record stored after all', requestId: record.request_id })
      expect((await store.get(owner, record.request_id))?.request_id).toBe(record.request_id)
      await store.close()
      await (keyv.store as KeyvRedis<unknown>).disconnect(true)
    })
  })

  describe('a Redis that is slow to come up the first time', () => {
    it('waits for the first connection through the retries and stores the record', async () => {
      const port = await freePort()
      const keyv = recommendedKeyv('outcome', `redis://127.0.0.1:${port}`)
      const store = createGatewayStore({ keyv, onError: () => {} })
      const { logger, lines } = recordingLogger()
      const owner = newOwner()
      const record = makeRecord()
      const writing = writeRecord(store, owner, record, 60_000, logger)
      await sleep(2500)
      await startOwnRedis(port)
      expect(await writing).toBe(true)
      expect(lines).toEqual([])
      expect((await store.get(owner, record.request_id))?.request_id).toBe(record.request_id)
      await store.close()
      await (keyv.store as KeyvRedis<unknown>).disconnect(true)
    })
  })
})
