import { expect, it } from 'vitest'
import { listText } from '../../src/handlers/recovery-queries.js'
import type { RecoverySummary } from '../../src/types.js'
import { turnsDuring } from '../support/loop-turns.js'

it('serialises a list of 300 000 summaries a thousand at a time, turning the event loop between slices', async () => {
  const items: RecoverySummary[] = Array.from({ length: 300_000 }, (_, i) => ({
    request_id: `01ARZ3NDEKTSV4RRFF${String(i).padStart(8, '0')}`,
    created_at: 1_700_000_000 + i,
    interrupted_reason: i % 2 ? 'context canceled' : 'write failed: EPIPE',
    request_body_hash: 'ab"c\\d\u0001',
  }))
  const { result, turns } = await turnsDuring(() => listText(items))
  expect(result).toBe(JSON.stringify({ count: items.length, items }))
  expect(turns).toBeGreaterThanOrEqual(299)
  expect(await listText([])).toBe('{"count":0,"items":[]}')
})
