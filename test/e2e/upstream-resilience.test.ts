import diagnosticsChannel from 'node:diagnostics_channel'
import http from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway } from '../support/collecting-gateway.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, listen, type MountedServer } from '../support/http.js'
import { serve } from '../support/servers.js'

/** A chat-completions answer as an upstream sends it. */
const answer = (text: string) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  })

interface Seen {
  key: string | undefined
  model: string
}

/** An upstream whose every answer the test decides, from the key and body it got. */
async function upstream(respond: (seen: Seen, req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string }
      const entry = { key: req.headers.authorization?.replace('Bearer ', ''), model: String(body.model) }
      seen.push(entry)
      respond(entry, req, res)
    })
  })
  const mounted = await listen(server)
  return { url: mounted.url, seen, close: () => mounted.close() }
}

const ok = (res: http.ServerResponse, text: string, headers: Record<string, string> = {}) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers })
  res.end(answer(text))
}
const refuse = (res: http.ServerResponse, status: number, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ error: { message: `refused with ${status}`, type: 'x', code: null, param: null } }))
}

const opened: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close()
})

/** A gateway on node:http with these upstreams and models; logs and usage collected. */
async function gatewayWith(options: Pick<GatewayOptions, 'upstreams' | 'models'> & Partial<GatewayOptions>) {
  const { gateway, logs, usage } = collectingGateway(options)
  const server: MountedServer = await serve(nodeHandler(gateway))
  opened.push({ close: () => gateway.close() }, server)
  const post = (content: string, extra: Record<string, unknown> = {}) =>
    call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody(content, extra) })
  return { gateway, logs, usage, post }
}

describe('key pools', () => {
  it('spreads calls over the keys, rests a revoked key after its 401, and every call succeeds', async () => {
    const up = await upstream((seen, _req, res) => (seen.key === 'sk-revoked-0000' ? refuse(res, 401) : ok(res, `from ${seen.key}`)))
    opened.push(up)
    const gw = await gatewayWith({
      upstreams: {
        u: {
          type: 'openai',
          baseUrl: `${up.url}/v1`,
          apiKeys: ['sk-good-one-1111', { key: 'sk-revoked-0000', alias: 'old' }, 'sk-good-two-2222'],
        },
      },
      models: [{ id: 'gpt-4o-mini', upstream: 'u' }],
    })
    const answers = []
    for (let i = 0; i < 12; i++) answers.push(await gw.post(`pool ${i}`))
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200))
    // The revoked key was tried once, then rested for the rest of the run.
    expect(up.seen.filter((s) => s.key === 'sk-revoked-0000')).toHaveLength(1)
    expect(new Set(up.seen.map((s) => s.key))).toEqual(new Set(['sk-good-one-1111', 'sk-revoked-0000', 'sk-good-two-2222']))
    expect(new Set(gw.usage.map((u) => u.keyAlias))).toEqual(new Set(['key-1', 'key-3']))
    const line = gw.logs.find((l) => l.message === 'model-gateway: upstream attempt failed')
    expect(line?.meta).toMatchObject({ upstream: 'u', key: 'old', status: 401, attempt: expect.any(Number) })
    expect(JSON.stringify(gw.logs)).not.toMatch(/sk-revoked|sk-good|pool \d/)
  })

  it('moves a 429 to the next key, and gives the client the last 429 with its retry-after when every key is limited', async () => {
    let limitAll = false
    const up = await upstream((seen, _req, res) =>
      limitAll || seen.key === 'sk-limited-aaaa'
        ? refuse(res, 429, {
            'retry-after': '7',
            'retry-after-ms': '7000',
            'x-ratelimit-remaining-requests': '0',
            // Neither a retry hint nor rate-limit state: not passed down.
            'retry-afterwards': 'no',
            'x-ratelimit': 'no',
            'x-other': 'no',
          })
        : ok(res, 'fine'),
    )
    opened.push(up)
    const gw = await gatewayWith({
      upstreams: { u: { type: 'openai', baseUrl: `${up.url}/v1`, apiKeys: ['sk-limited-aaaa', 'sk-spare-bbbb'] } },
      models: [{ id: 'gpt-4o-mini', upstream: 'u' }],
    })
    expect((await gw.post('rotate')).status).toBe(200)
    limitAll = true
    const limited = await gw.post('all limited')
    expect(limited.status).toBe(429)
    expect(limited.headers['retry-after']).toBe('7')
    expect(limited.headers['x-ratelimit-remaining-requests']).toBe('0')
    expect(limited.headers['retry-after-ms']).toBe('7000')
    for (const name of ['retry-afterwards', 'x-ratelimit', 'x-other']) expect(limited.headers[name], name).toBeUndefined()
  })
})

describe('least-in-flight key selection', () => {
  it.each([
    ['a whole call', false],
    ['a stream', true],
  ])('sends calls past a key whose call (%s) is still running, where round robin would return to it', async (_, stream) => {
    const held: http.ServerResponse[] = []
    const name = (key: string | undefined) => (key === 'sk-first-1111' ? 'first' : 'second')
    // The first call is held open (a stream after its first event) until the test lets it go; the others answer at once.
    const up = await upstream((seen, _req, res) => {
      if (up.seen.length > 1) return ok(res, name(seen.key))
      if (stream) res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: {"choices":[]}\n\n')
      held.push(res)
    })
    opened.push(up)
    const gw = await gatewayWith({
      upstreams: {
        u: { type: 'openai', baseUrl: `${up.url}/v1`, apiKeys: ['sk-first-1111', 'sk-second-2222'], keySelection: 'least-in-flight' },
      },
      models: [{ id: 'gpt-4o-mini', upstream: 'u' }],
    })
    // Closed first, so a failed test does not leave the gateway waiting for the held call.
    opened.push({
      close: async () => {
        for (const res of held) res.destroy()
      },
    })
    const text = async (content: string) => (await gw.post(content)).json.choices[0].message.content
    const first = gw.post('held', { stream })
    await eventually(() => held.length === 1)
    expect([await text('second'), await text('third')]).toEqual(['second', 'second'])
    const release = held[0] as http.ServerResponse
    if (stream) release.end('data: [DONE]\n\n')
    else ok(release, 'first, let go')
    expect((await first).status).toBe(200)
    // The first key is free again: it takes the next call.
    expect(await text('fourth')).toBe('first')
    expect(up.seen.map((s) => name(s.key))).toEqual(['first', 'second', 'second', 'first'])
  })
})

describe('fallbacks', () => {
  const twoModels = (primaryUrl: string, fallbackUrl: string, extra: Partial<GatewayOptions> = {}) =>
    gatewayWith({
      upstreams: {
        primary: { type: 'openai', baseUrl: `${primaryUrl}/v1` },
        backup: { type: 'openai', baseUrl: `${fallbackUrl}/v1` },
      },
      models: [
        { id: 'gpt-4o-mini', upstream: 'primary', fallbacks: ['backup-model'] },
        { id: 'backup-model', upstream: 'backup', upstreamModel: 'backup-upstream-name' },
      ],
      ...extra,
    })

  it('falls back when the upstream refuses the connection, naming the fallback’s model in its body', async () => {
    const backup = await upstream((_seen, _req, res) => ok(res, 'from the backup'))
    opened.push(backup)
    const gw = await twoModels(`http://127.0.0.1:${await freePort()}`, backup.url)
    const res = await gw.post('primary is down')
    expect(res.status).toBe(200)
    expect(res.json.choices[0].message.content).toBe('from the backup')
    expect(backup.seen).toEqual([{ key: undefined, model: 'backup-upstream-name' }])
    expect(gw.usage[0]).toMatchObject({ upstream: 'backup', model: 'gpt-4o-mini' })
    expect(gw.logs.find((l) => l.message === 'model-gateway: upstream attempt failed')?.meta).toMatchObject({
      upstream: 'primary',
      code: 'upstream_unreachable',
    })
  })

  it.each([429, 500, 502, 503, 504, 529])('falls back on a %i answer, which says no work was done', async (status) => {
    const primary = await upstream((_seen, _req, res) => refuse(res, status))
    const backup = await upstream((_seen, _req, res) => ok(res, 'backup'))
    opened.push(primary, backup)
    const gw = await twoModels(primary.url, backup.url)
    expect((await gw.post(`status ${status}`)).status).toBe(200)
    expect([primary.seen.length, backup.seen.length]).toEqual([1, 1])
  })

  it('never falls back on a 400: the request is the problem, and the client gets the answer', async () => {
    const primary = await upstream((_seen, _req, res) => refuse(res, 400))
    const backup = await upstream((_seen, _req, res) => ok(res, 'backup'))
    opened.push(primary, backup)
    const gw = await twoModels(primary.url, backup.url)
    expect((await gw.post('bad request')).status).toBe(400)
    expect(backup.seen).toHaveLength(0)
  })

  it('never falls back when the upstream timed out after the request was sent (it may still be generating)', async () => {
    const primary = await upstream(() => {
      // Never answers: a model still working on a long answer.
    })
    const backup = await upstream((_seen, _req, res) => ok(res, 'backup'))
    opened.push(primary, backup)
    const gw = await twoModels(primary.url, backup.url, { timeouts: { upstreamMs: 300 } })
    expect((await gw.post('slow headers')).status).toBe(504)
    expect(backup.seen).toHaveLength(0)
  })

  it('never falls back when the connection broke after the request was sent', async () => {
    const primary = await upstream((_seen, req) => req.socket.destroy())
    const backup = await upstream((_seen, _req, res) => ok(res, 'backup'))
    opened.push(primary, backup)
    const gw = await twoModels(primary.url, backup.url)
    expect((await gw.post('reset before headers')).status).toBe(502)
    expect([primary.seen.length, backup.seen.length]).toEqual([1, 0])
  })
})

describe('circuits', () => {
  it('opens after failures in a row, sends the next calls to the fallback at once, then probes and closes', async () => {
    let healthy = false
    const primary = await upstream((_seen, _req, res) => (healthy ? ok(res, 'primary') : refuse(res, 503)))
    const backup = await upstream((_seen, _req, res) => ok(res, 'backup'))
    opened.push(primary, backup)
    const states: string[] = []
    const listener = (message: unknown) => states.push((message as { state: string }).state)
    diagnosticsChannel.subscribe('model-gateway:upstream:circuit', listener)
    try {
      const gw = await gatewayWith({
        upstreams: {
          primary: { type: 'openai', baseUrl: `${primary.url}/v1`, circuit: { failures: 2, cooldownMs: 300 } },
          backup: { type: 'openai', baseUrl: `${backup.url}/v1` },
        },
        models: [
          { id: 'gpt-4o-mini', upstream: 'primary', fallbacks: ['b'] },
          { id: 'b', upstream: 'backup' },
        ],
      })
      for (let i = 0; i < 4; i++) expect((await gw.post(`circuit ${i}`)).json.choices[0].message.content).toBe('backup')
      // Two failures opened the circuit: the two calls after it never reached the primary.
      expect(primary.seen).toHaveLength(2)
      expect(states).toEqual(['open'])
      expect((await gw.gateway.status()).upstreams).toEqual({ primary: 'open', backup: 'closed' })
      healthy = true
      await new Promise((resolve) => setTimeout(resolve, 350))
      expect((await gw.post('probe')).json.choices[0].message.content).toBe('primary')
      expect(states).toEqual(['open', 'half-open', 'closed'])
    } finally {
      diagnosticsChannel.unsubscribe('model-gateway:upstream:circuit', listener)
    }
  })
})

describe('upstream options', () => {
  const base = { models: [{ id: 'm', upstream: 'u' }], auth: { apiKeys: [KEY_A] } }
  const build =
    (u: Record<string, unknown>, models: unknown = base.models) =>
    () =>
      createGateway({ ...base, models, upstreams: { u: u as never } } as GatewayOptions)

  it.each([
    [{ type: 'openai', baseUrl: 'https://api.example.com/v1' }, /needs apiKey or apiKeys/],
    [{ type: 'openai', baseUrl: 'https://x', apiKey: 'k', apiKeys: ['k2'] }, /apiKey or apiKeys, not both/],
    [{ type: 'openai', baseUrl: 'https://x', apiKeys: [] }, /non-empty array/],
    [{ type: 'openai', baseUrl: 'https://x', apiKeys: [{ key: 'k', weight: 0 }] }, /weight/],
    [
      {
        type: 'openai',
        baseUrl: 'https://x',
        apiKeys: [
          { key: 'a', alias: 'x' },
          { key: 'b', alias: 'x' },
        ],
      },
      /used twice/,
    ],
    [{ type: 'openai', baseUrl: 'https://x', keyless: 'yes' }, /keyless must be a boolean/],
    [{ type: 'openai', baseUrl: 'http://127.0.0.1:1', circuit: { failures: 0 } }, /circuit.failures must be a positive integer/],
    [{ type: 'openai', baseUrl: 'http://127.0.0.1:1', circuit: { cooldown: 5 } }, /cooldownMs/],
    [
      { type: 'openai', baseUrl: 'http://127.0.0.1:1', keySelection: 'fastest' },
      /keySelection must be one of: 'round-robin', 'least-in-flight'/,
    ],
    [{ type: 'openai', baseUrl: 'http://127.0.0.1:1', keyselection: 'least-in-flight' }, /did you mean `keySelection`/],
  ])('rejects %j', (upstreamOptions, message) => {
    expect(build(upstreamOptions)).toThrow(message)
  })

  it('accepts a keyless upstream when told so, or on a loopback host, or with a configured auth header', async () => {
    for (const u of [
      { type: 'openai', baseUrl: 'https://llm.internal/v1', keyless: true },
      { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' },
      { type: 'openai', baseUrl: 'http://localhost:8000/v1' },
      { type: 'openai', baseUrl: 'https://llm.internal/v1', headers: { authorization: 'Bearer token-from-elsewhere' } },
    ]) {
      await build(u)().close()
    }
  })

  const withModels = (models: unknown) => () =>
    createGateway({
      ...base,
      models: models as GatewayOptions['models'],
      upstreams: { u: { type: 'openai', baseUrl: 'http://127.0.0.1:1/v1' }, g: { type: 'gemini', baseUrl: 'http://127.0.0.1:1' } },
    })

  it.each([
    [[{ id: 'm', upstream: 'u', fallbacks: ['nope'] }], /not a configured model id/],
    [[{ id: 'm', upstream: 'u', fallbacks: ['m'] }], /the model itself/],
    [[{ id: 'm', upstream: 'u', fallbacks: 'g' }], /must be an array of model ids/],
  ])('rejects fallbacks %j', (models, message) => {
    expect(withModels(models)).toThrow(message)
  })

  it('accepts fallbacks of the other format, both ways', async () => {
    const gateway = withModels([
      { id: 'm', upstream: 'u', fallbacks: ['g'] },
      { id: 'g', upstream: 'g', fallbacks: ['m'] },
    ])()
    await gateway.close()
  })
})
