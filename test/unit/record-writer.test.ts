import { describe, expect, it } from 'vitest'
import { PendingWrites } from '../../src/recovery/pending.js'
import { buildRecord } from '../../src/recovery/record.js'
import { writeRecord } from '../../src/recovery/writer.js'
import type { GatewayStore } from '../../src/store/gateway-store.js'
import { StoreDeadline, storeUnavailable } from '../../src/store/guard.js'
import type { RecoveryRecord } from '../../src/types.js'

const record = buildRecord(
  {
    requestId: '01JABCDEFGHJKMNPQRSTVWXYZ0',
    reason: 'context canceled',
    operation: 'chat.completions',
    path: '/v1/chat/completions',
    model: 'gpt',
    requestBytes: Buffer.from('{}'),
    requestHash: 'a'.repeat(64),
    status: 200,
    contentType: 'application/json',
    responseBytes: Buffer.from('{"ok":true}'),
  },
  1 << 20,
)

/** A store that refuses the first `failures` writes as unavailable, and says it is healthy as `healthy` says. */
function storeThat(failures: number, healthy: () => boolean) {
  const stored: RecoveryRecord[] = []
  let puts = 0
  const store = {
    async put(_owner: string, value: RecoveryRecord) {
      puts++
      if (puts <= failures) throw storeUnavailable('Redis is not connected.')
      stored.push(value)
    },
    healthy: async () => healthy(),
  } as unknown as GatewayStore
  return { store, stored, puts: () => puts }
}

function logger() {
  const errors: string[] = []
  return { errors, logger: { info() {}, warn() {}, error: (message: string) => errors.push(message) } }
}

describe('writing a recovery record past a store outage', () => {
  it('writes once more when the store is back by the time the retries ran out (its client was still reconnecting)', async () => {
    const { store, stored, puts } = storeThat(4, () => true)
    const log = logger()
    expect(await writeRecord(store, 'owner', record, 60_000, log.logger)).toBe(true)
    expect(puts()).toBe(5)
    expect(stored).toEqual([record])
    expect(log.errors).toEqual([])
  })

  it('holds the record for later while the store is down, and logs nothing lost', async () => {
    const { store, stored } = storeThat(Number.POSITIVE_INFINITY, () => false)
    const log = logger()
    const pending = new PendingWrites(() => store, { maxRecords: 10, maxBytes: 1 << 20 }, log.logger)
    expect(await writeRecord(store, 'owner', record, 60_000, log.logger, { pending })).toBe(false)
    expect(pending.size).toBe(1)
    expect(stored).toEqual([])
    expect(log.errors).toEqual([])
    await pending.close()
  })

  it('logs a record a store that is up refuses again as not stored, without holding it', async () => {
    const { store, puts } = storeThat(Number.POSITIVE_INFINITY, () => true)
    const log = logger()
    const pending = new PendingWrites(() => store, { maxRecords: 10, maxBytes: 1 << 20 }, log.logger)
    expect(await writeRecord(store, 'owner', record, 60_000, log.logger, { pending })).toBe(false)
    expect(puts()).toBe(5)
    expect(pending.size).toBe(0)
    expect(log.errors).toEqual(['model-gateway: recovery record could not be stored'])
  })

  it('holds a record whose last write got no answer in time and writes it again, once the store takes writes', async () => {
    let puts = 0
    const stored: RecoveryRecord[] = []
    const store = {
      async put(_owner: string, value: RecoveryRecord) {
        puts++
        if (puts <= 4) throw storeUnavailable('No answer in time.', new StoreDeadline('No answer in time.'))
        stored.push(value)
      },
      healthy: async () => true,
    } as unknown as GatewayStore
    const log = logger()
    const pending = new PendingWrites(() => store, { maxRecords: 10, maxBytes: 1 << 20 }, log.logger)
    expect(await writeRecord(store, 'owner', record, 60_000, log.logger, { pending })).toBe(false)
    expect(pending.size).toBe(1)
    await pending.close()
    expect(stored).toEqual([record])
    expect(log.errors).toEqual([])
  })
})
