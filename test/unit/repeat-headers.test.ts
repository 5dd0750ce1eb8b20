import { describe, expect, it } from 'vitest'
import { sdkInvocationIdOf, sdkRetryCountOf } from '../../src/idempotency/headers.js'
import { MAX_SESSION_ID_LENGTH, sessionIdOf } from '../../src/observe/session-id.js'

describe('sdkRetryCountOf', () => {
  it('reads x-stainless-retry-count', () => {
    expect(sdkRetryCountOf({ 'x-stainless-retry-count': '0' })).toBe(0)
    expect(sdkRetryCountOf({ 'x-stainless-retry-count': '2' })).toBe(2)
    expect(sdkRetryCountOf({ 'x-stainless-retry-count': 'two' })).toBeUndefined()
  })

  it('reads the AWS SDKs’ amz-sdk-request: attempt 1 is the first try, attempt N retry N-1', () => {
    expect(sdkRetryCountOf({ 'amz-sdk-request': 'attempt=1; max=3' })).toBe(0)
    expect(sdkRetryCountOf({ 'amz-sdk-request': 'attempt=2; max=3' })).toBe(1)
    expect(sdkRetryCountOf({ 'amz-sdk-request': 'attempt=3' })).toBe(2)
    // Some AWS SDKs put a ttl first.
    expect(sdkRetryCountOf({ 'amz-sdk-request': 'ttl=20261129T012000Z; attempt=2; max=3' })).toBe(1)
  })

  it('takes nothing else for a retry count', () => {
    for (const value of ['attempt=0; max=3', 'attempt=; max=3', 'max=3', 'attempt=x', 'attempt=99999', 'myattempt=2', 'attempt=2x']) {
      expect(sdkRetryCountOf({ 'amz-sdk-request': value }), value).toBeUndefined()
    }
    expect(sdkRetryCountOf({})).toBeUndefined()
  })

  it('the Stainless header wins when a client sends both', () => {
    expect(sdkRetryCountOf({ 'x-stainless-retry-count': '0', 'amz-sdk-request': 'attempt=3; max=3' })).toBe(0)
  })
})

describe('sdkInvocationIdOf', () => {
  it('reads a UUID as the AWS SDKs send it', () => {
    const id = '8f0e5b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b'
    expect(sdkInvocationIdOf({ 'amz-sdk-invocation-id': id })).toBe(id)
  })

  it('ignores what is not an id: too long, spaces, repeated headers joined', () => {
    expect(sdkInvocationIdOf({ 'amz-sdk-invocation-id': 'a'.repeat(65) })).toBeUndefined()
    expect(sdkInvocationIdOf({ 'amz-sdk-invocation-id': 'a, b' })).toBeUndefined()
    expect(sdkInvocationIdOf({ 'amz-sdk-invocation-id': '' })).toBeUndefined()
    expect(sdkInvocationIdOf({})).toBeUndefined()
  })
})

describe('sessionIdOf', () => {
  it('reads X-Claude-Code-Session-Id up to its bound', () => {
    expect(sessionIdOf({ 'x-claude-code-session-id': 'abc-123' })).toBe('abc-123')
    expect(sessionIdOf({ 'x-claude-code-session-id': 'x'.repeat(MAX_SESSION_ID_LENGTH) })).toHaveLength(MAX_SESSION_ID_LENGTH)
  })

  it('leaves out a malformed id rather than failing', () => {
    for (const value of ['', 'x'.repeat(MAX_SESSION_ID_LENGTH + 1), 'a b', 'tab\there', 'ünïcode', 'line\nbreak']) {
      expect(sessionIdOf({ 'x-claude-code-session-id': value }), JSON.stringify(value)).toBeUndefined()
    }
    expect(sessionIdOf({ 'x-claude-code-session-id': ['a', 'b'] as unknown as string })).toBeUndefined()
    expect(sessionIdOf({})).toBeUndefined()
  })
})
