import net from 'node:net'
import type { Readable } from 'node:stream'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ByteBudget } from '../../src/byte-budget.js'
import { resolveOptions } from '../../src/config/resolve.js'
import { type AbortHook, createSend, type UpstreamRequest } from '../../src/upstream/send.js'

/**
 * A raw upstream that answers a stream's head and first event, then waits for the test: `cut` resets the
 * connection, as an upstream that dies mid-stream does.
 */
async function startCuttingUpstream() {
  const sockets: net.Socket[] = []
  let arrived: (() => void) | undefined
  const server = net.createServer((socket) => {
    sockets.push(socket)
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n')
      socket.write('10\r\ndata: {"a":1}\n\n\r\n')
      arrived?.()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    /** Resolves once a request came in and its head went out. */
    answered: () => new Promise<void>((resolve) => (arrived = resolve)),
    cut: () => {
      for (const socket of sockets) socket.resetAndDestroy()
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('a streamed upstream answer', () => {
  let upstream: Awaited<ReturnType<typeof startCuttingUpstream>>
  const agent = new Agent()
  beforeAll(async () => {
    upstream = await startCuttingUpstream()
  })
  afterAll(async () => {
    await agent.close()
    await upstream.close()
  })

  function streamRequest(hook: AbortHook): UpstreamRequest {
    const options = resolveOptions({
      upstreams: { cutting: { type: 'openai', baseUrl: upstream.url } },
      models: [{ id: 'm', upstream: 'cutting' }],
      auth: { apiKeys: ['k'] },
    })
    return {
      requestId: 'req_1',
      model: options.models.get('m')!,
      operation: 'chat.completions',
      stream: true,
      attempt: 1,
      body: Buffer.from('{"model":"m","stream":true,"messages":[]}'),
      dialectHeaders: [],
      abortHook: hook,
    }
  }

  it('breaks off without an uncaught exception when the upstream dies before anyone reads the body', async () => {
    const answered = upstream.answered()
    const response = await createSend(agent, new ByteBudget(1024))(streamRequest({}))
    await answered
    const body = response.body as Readable
    // Nobody listens to the body yet: the cut must not throw out of the event loop (vitest fails the run if it does).
    upstream.cut()
    await new Promise((resolve) => body.once('close', resolve))
    expect(body.destroyed).toBe(true)
    expect(body.errored).toBeInstanceOf(Error)
  })

  it('stops the upstream call through its hook, and hands the reason to whoever reads the body', async () => {
    const hook: AbortHook = {}
    const answered = upstream.answered()
    const response = await createSend(agent, new ByteBudget(1024))(streamRequest(hook))
    await answered
    const body = response.body as Readable
    const failed = new Promise<Error>((resolve) => body.once('error', resolve))
    const reason = new Error('The client left.')
    hook.abort?.(reason)
    expect(await failed).toBe(reason)
  })
})
