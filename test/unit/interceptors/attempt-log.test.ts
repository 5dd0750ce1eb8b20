import { performance } from 'node:perf_hooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { attemptLog } from '../../../src/upstream/interceptors/attempt-log.js'
import { modelsOf, recordingLogger, requestFor, scriptedNext, sendFailures } from '../../support/fake-send.js'

const [FIRST, SECOND] = ['sk-live-FIRST-0123456789abcdef', 'sk-live-SECOND-0123456789abcdef'] as const
const models = modelsOf({
  upstreams: {
    pool: { type: 'openai', baseUrl: 'https://pool.example.test/v1', apiKeys: [FIRST, { key: SECOND, alias: 'backup-key' }] },
    local: { type: 'openai', baseUrl: 'http://127.0.0.1:1/v1' },
  },
  models: [
    { id: 'm', upstream: 'pool', upstreamModel: 'gpt-upstream' },
    { id: 'keyless', upstream: 'local' },
  ],
})
const model = models.get('m')!
const FAILED = 'model-gateway: upstream attempt failed'

/** An attempt the key pool sent with its second key, as a call's third attempt, that took 250.4 ms. */
function pooledAttempt() {
  vi.spyOn(performance, 'now').mockReturnValueOnce(1_000).mockReturnValueOnce(1_250.4)
  return requestFor(model, { requestId: 'req_7', attempt: 3, key: model.upstream.keys[1] })
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the attempt log', () => {
  it.each([401, 403, 429, 500, 502, 503, 529])('writes one warn line for an answer of %i', async (status) => {
    const { logger, lines } = recordingLogger()
    const response = await attemptLog(logger)(scriptedNext({ status }))(pooledAttempt())
    expect(response.statusCode).toBe(status)
    expect(lines).toEqual([
      {
        level: 'warn',
        message: FAILED,
        meta: {
          requestId: 'req_7',
          upstream: 'pool',
          origin: 'https://pool.example.test',
          model: 'gpt-upstream',
          key: 'backup-key',
          attempt: 3,
          durationMs: 250,
          status,
        },
      },
    ])
  })

  it.each([200, 201, 400, 404, 408, 413, 422])('writes nothing for an answer of %i', async (status) => {
    const { logger, lines } = recordingLogger()
    await attemptLog(logger)(scriptedNext({ status }))(pooledAttempt())
    expect(lines).toEqual([])
  })

  it('writes the GatewayError code of an attempt that got no answer, and passes the error on', async () => {
    const { logger, lines } = recordingLogger()
    const failure = sendFailures.connectTimeout()
    await expect(attemptLog(logger)(scriptedNext({ error: failure }))(pooledAttempt())).rejects.toBe(failure)
    expect(lines).toEqual([
      {
        level: 'warn',
        message: FAILED,
        meta: {
          requestId: 'req_7',
          upstream: 'pool',
          model: 'gpt-upstream',
          key: 'backup-key',
          attempt: 3,
          durationMs: 250,
          code: 'upstream_timeout',
          origin: 'https://pool.example.test',
          cause: 'UND_ERR_CONNECT_TIMEOUT',
        },
      },
    ])
  })

  it('calls an error that is not a GatewayError internal_error', async () => {
    const { logger, lines } = recordingLogger()
    await expect(attemptLog(logger)(scriptedNext({ error: new TypeError('a bug') }))(requestFor(model))).rejects.toThrow('a bug')
    expect(lines[0]?.meta?.code).toBe('internal_error')
  })

  it("names the upstream's first key when no key pool chose one, and none for a keyless upstream", async () => {
    const { logger, lines } = recordingLogger()
    const send = attemptLog(logger)(scriptedNext({ status: 500 }, { status: 500 }))
    await send(requestFor(model))
    await send(requestFor(models.get('keyless')!))
    expect(lines.map((line) => line.meta?.key)).toEqual(['key-1', undefined])
  })

  it('never writes a key, nor its auth header', async () => {
    const { logger, lines } = recordingLogger()
    const send = attemptLog(logger)(scriptedNext({ status: 401 }, { error: sendFailures.refused() }, { status: 503 }))
    await send(requestFor(model, { key: model.upstream.keys[0] }))
    await send(requestFor(model, { key: model.upstream.keys[1] })).catch(() => {})
    await send(requestFor(model))
    expect(lines).toHaveLength(3)
    const written = JSON.stringify(lines)
    for (const secret of [FIRST, SECOND]) expect(written).not.toContain(secret)
    expect(written).not.toMatch(/authorization|bearer/i)
    // The lines name exactly these facts, nothing taken from the request's body or headers: an answer's status, or
    // a failure's code and its cause beneath.
    for (const line of lines) {
      const outcome = 'code' in (line.meta ?? {}) ? ['code', 'cause'] : ['status']
      expect(Object.keys(line.meta ?? {}).sort()).toEqual(
        ['attempt', 'durationMs', 'key', 'model', 'origin', 'requestId', 'upstream', ...outcome].sort(),
      )
    }
  })
})
