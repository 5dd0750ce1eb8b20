// The floor: the least a proxy in front of a model API can do on node:http with undici. It reads the
// whole body (a gateway must, to route by model), forwards it with a keep-alive agent, answers a JSON
// response in one write, relays a stream chunk by chunk with backpressure and drops the upstream call
// when a stream's client leaves (Koa pipes and destroys the source itself). Under Express and Koa the
// answer goes out as each framework's users write it (`res.send`, `ctx.body`); `handle` is the same
// proxy on node:http alone.
// No validation, no auth, no recovery: whatever a contestant costs above this is its own work.
import { Agent } from 'undici'

/** @param {string} upstream origin of the mock, e.g. http://127.0.0.1:1234 */
export function createFloor(upstream) {
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 600_000, bodyTimeout: 600_000 })

  /** A whole stream (request or upstream body) in one buffer: one write downstream, as any buffering proxy does. */
  function collect(stream) {
    return new Promise((resolve, reject) => {
      const chunks = []
      let size = 0
      stream.on('data', (chunk) => {
        chunks.push(chunk)
        size += chunk.length
      })
      stream.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)))
      stream.on('error', reject)
    })
  }

  /** @param {import('node:http').IncomingMessage} req @param {Buffer} body */
  function forward(req, body) {
    return agent.request({
      origin: upstream,
      path: req.url,
      method: req.method,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), accept: req.headers.accept ?? '*/*' },
      body,
    })
  }

  const isStream = (up) => String(up.headers['content-type'] ?? '').startsWith('text/event-stream')

  /** Relays a stream with backpressure; a client that leaves destroys the upstream body, which aborts the call. */
  function relay(up, res) {
    return new Promise((resolve, reject) => {
      res.writeHead(up.statusCode, { 'content-type': up.headers['content-type'] })
      const stop = () => {
        if (!res.writableFinished) up.body.destroy()
      }
      res.once('close', stop)
      up.body.on('data', (chunk) => {
        if (!res.write(chunk)) {
          up.body.pause()
          res.once('drain', () => up.body.resume())
        }
      })
      up.body.on('end', () => {
        res.off('close', stop)
        res.end()
        resolve(undefined)
      })
      up.body.on('error', reject)
    })
  }

  function fail(res) {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'application/json' })
      res.end('{"error":"bad gateway"}')
    } else res.destroy()
  }

  /** A `(req, res) => void` proxy that hands a whole answer to `answer`; a stream is relayed as it comes. */
  function proxy(answer) {
    return (req, res) => {
      collect(req)
        .then((body) => forward(req, body))
        .then(async (up) => {
          if (isStream(up)) return relay(up, res)
          answer(res, up, await collect(up.body))
        })
        .catch(() => fail(res))
    }
  }

  /** node:http: the answer in one `writeHead` and `end`. */
  const handle = proxy((res, up, bytes) => {
    res.writeHead(up.statusCode, { 'content-type': up.headers['content-type'] ?? 'application/json', 'content-length': bytes.length })
    res.end(bytes)
  })

  /** Express, written the Express way: the answer through `res.status().type().send()` (its headers, ETag and length). */
  const express = proxy((res, up, bytes) => {
    res
      .status(up.statusCode)
      .type(up.headers['content-type'] ?? 'application/json')
      .send(bytes)
  })

  /** Koa, written the Koa way: `ctx.body` is the buffered answer, or the upstream stream that Koa pipes. */
  async function koa(ctx) {
    const body = await collect(ctx.req)
    const up = await forward(ctx.req, body)
    ctx.status = up.statusCode
    ctx.type = up.headers['content-type'] ?? 'application/json'
    ctx.body = isStream(up) ? up.body : await collect(up.body)
  }

  return { handle, express, koa, close: () => agent.close() }
}
