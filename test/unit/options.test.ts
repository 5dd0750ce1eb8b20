import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/config/resolve.js'
import { GatewayError, isGatewayError } from '../../src/errors.js'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'

const valid: GatewayOptions = {
  upstreams: { openai: { type: 'openai', baseUrl: 'https://api.example.com/v1', apiKey: 'k' } },
  models: [{ id: 'gpt-4o-mini', upstream: 'openai' }],
  auth: { apiKeys: ['sk-1'] },
}

function rejects(patch: Record<string, unknown>, message: RegExp) {
  let caught: unknown
  try {
    createGateway({ ...valid, ...patch } as GatewayOptions)
  } catch (error) {
    caught = error
  }
  expect(isGatewayError(caught)).toBe(true)
  expect((caught as GatewayError).code).toBe('invalid_options')
  expect((caught as GatewayError).message).toMatch(message)
}

describe('createGateway options', () => {
  it('accepts a minimal valid configuration and closes cleanly', async () => {
    const gateway = createGateway(valid)
    await gateway.close()
    await gateway.close()
  })

  it('accepts a Keyv store and an authenticate function', async () => {
    const gateway = createGateway({ ...valid, store: new Keyv(), auth: { authenticate: () => ({ owner: 'team-1' }) } })
    await gateway.close()
  })

  it.each([
    [{ upstreams: {} }, /upstreams/],
    [{ upstreams: { a: { type: 'mistral', baseUrl: 'https://x' } } }, /type/],
    [{ upstreams: { a: { type: 'openai', baseUrl: 'not a url' } } }, /baseUrl/],
    [{ upstreams: { a: { type: 'openai', baseUrl: 'ftp://x' } } }, /http/],
    [{ upstreams: { a: { type: 'openai', baseUrl: 'https://u:p@x' } } }, /credentials/],
    [{ upstreams: { a: { type: 'openai', baseUrl: 'https://x', apiKey: '' } } }, /apiKey/],
    [{ models: [] }, /models/],
    [{ models: [{ id: 'x', upstream: 'missing' }] }, /upstream/],
    [{ models: [{ id: '', upstream: 'openai' }] }, /id/],
    [{ models: [{ id: 'a b', upstream: 'openai' }] }, /id/],
    [
      {
        models: [
          { id: 'x', upstream: 'openai' },
          { id: 'x', upstream: 'openai' },
        ],
      },
      /twice/,
    ],
    [{ models: [{ id: 'x', upstream: 'openai', created: -1 }] }, /created/],
    [{ models: [{ id: 'x', upstream: 'openai', maxOutputTokens: 0 }] }, /models\[0\]\.maxOutputTokens must be a positive integer/],
    [{ models: [{ id: 'x', upstream: 'openai', maxOutputTokens: 1.5 }] }, /maxOutputTokens/],
    [{ models: [{ id: 'x', upstream: 'openai', maxOutputTokens: '64000' }] }, /maxOutputTokens/],
    [{ models: [{ id: 'x', upstream: 'openai', contextWindow: 0 }] }, /models\[0\]\.contextWindow must be a positive integer/],
    [{ models: [{ id: 'x', upstream: 'openai', contextWindow: 1.5 }] }, /contextWindow/],
    [{ models: [{ id: 'x', upstream: 'openai', aliases: 'x.v1:0' }] }, /models\[0\]\.aliases must be an array/],
    [{ models: [{ id: 'x', upstream: 'openai', aliases: ['has space'] }] }, /models\[0\]\.aliases must hold/],
    [
      {
        models: [
          { id: 'x', upstream: 'openai' },
          { id: 'y', upstream: 'openai', aliases: ['x'] },
        ],
      },
      /models\[1\]\.aliases: 'x' is already a model id or alias/,
    ],
    [{ models: [{ id: 'x', upstream: 'openai', aliases: ['x.v1:0', 'x.v1:0'] }] }, /'x\.v1:0' is already/],
    [{ auth: {} }, /apiKeys/],
    [{ auth: { apiKeys: [] } }, /apiKeys/],
    [{ auth: { apiKeys: ['has space'] } }, /apiKeys/],
    [{ auth: { authenticate: 'yes' } }, /authenticate/],
    [{ store: {} }, /store/],
    [{ recovery: { ttlMs: 0 } }, /ttlMs/],
    [{ recovery: { maxStoredRequestBytes: 1.5 } }, /maxStoredRequestBytes/],
    [{ limits: { maxRequestBytes: -1 } }, /maxRequestBytes/],
    [{ idempotency: { sdkRetries: 'yes' } }, /idempotency\.sdkRetries must be a boolean/],
    [{ idempotency: { ttlMs: 0 } }, /idempotency\.ttlMs/],
    [{ idempotency: { retryWindowMs: 1.5 } }, /idempotency\.retryWindowMs/],
    [{ idempotency: { recentMs: -1 } }, /idempotency\.recentMs/],
    [{ idempotency: { recentMaxBytes: 'big' } }, /idempotency\.recentMaxBytes/],
    [{ idempotency: { waitMs: 0 } }, /idempotency\.waitMs/],
    [{ idempotency: { storeWaitMs: -1 } }, /idempotency\.storeWaitMs must be a whole number of ms/],
    [{ idempotency: { storeWaitMs: 1.5 } }, /idempotency\.storeWaitMs/],
    [{ idempotency: { failOpen: 'yes' } }, /idempotency\.failOpen must be a boolean/],
    [{ recovery: { maxPendingRecords: 0 } }, /recovery\.maxPendingRecords/],
    [{ recovery: { maxPendingBytes: 1.5 } }, /recovery\.maxPendingBytes/],
    [{ idempotency: { ttl: 1 } }, /ttlMs/],
    [{ timeouts: { upstreamMs: 'soon' } }, /upstreamMs/],
    [{ onUsage: 'nope' }, /onUsage/],
  ])('rejects %j', (patch, message) => rejects(patch, message))

  it('resolves a model’s maxOutputTokens and contextWindow, undefined when it sets none, and leaves debug lines out of the default logger', () => {
    const options = resolveOptions({
      ...valid,
      models: [
        { id: 'a', upstream: 'openai', maxOutputTokens: 64_000, contextWindow: 200_000 },
        { id: 'b', upstream: 'openai' },
      ],
    })
    expect(options.models.get('a')).toMatchObject({ maxOutputTokens: 64_000, contextWindow: 200_000 })
    expect(options.models.get('b')).toMatchObject({ maxOutputTokens: undefined, contextWindow: undefined })
    expect(options.logger.debug).toBeUndefined()
    expect(typeof options.logger.info).toBe('function')
  })

  it("resolves a model's aliases to the model, apart from the ids a listing shows", () => {
    const options = resolveOptions({
      ...valid,
      models: [{ id: 'claude', upstream: 'openai', aliases: ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude@2025'] }],
    })
    const model = options.models.get('claude')
    expect(options.aliases.get('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(model)
    expect(options.aliases.get('claude@2025')).toBe(model)
    expect([...options.models.keys()]).toEqual(['claude'])
  })

  it('rejects a missing options object', () => {
    expect(() => createGateway(undefined as unknown as GatewayOptions)).toThrow(GatewayError)
  })
})
