import Keyv from 'keyv'
import { describe, expect, it, vi } from 'vitest'
import { createGateway } from '../../src/gateway.js'

describe('store error logging', () => {
  it('logs the first store error at once and folds a burst into one line per interval', async () => {
    const keyv = new Keyv()
    const warnings: Array<{ message: string; meta?: Record<string, unknown> }> = []
    const gateway = createGateway({
      upstreams: { u: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
      models: [{ id: 'm', upstream: 'u' }],
      auth: { apiKeys: ['sk-1'] },
      store: keyv,
      logger: { warn: (message, meta) => warnings.push({ message, meta }), error: () => {} },
    })
    try {
      // What a reconnecting store adapter does: one 'error' per attempt, re-emitted by Keyv.
      for (let i = 0; i < 25; i++) keyv.emit('error', new Error(`connection refused #${i}`))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.message).toBe('model-gateway: store error')
      expect(warnings[0]!.meta?.error).toContain('connection refused #0')
      vi.useFakeTimers({ toFake: ['Date'] })
      vi.setSystemTime(Date.now() + 10_001)
      keyv.emit('error', new Error('still refused'))
      expect(warnings).toHaveLength(2)
      expect(warnings[1]!.meta).toEqual({ error: 'Error: still refused', suppressed: 24 })
    } finally {
      vi.useRealTimers()
      await gateway.close()
    }
  })
})
