import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mulberry32 } from '../../bench/lib/random.mjs'

/** What the proxy does with one request, the way a CDN or a flaky network treats a connection. */
export type Fate =
  /** Relays the request and the whole answer. */
  | { kind: 'pass' }
  /** Drops the connection before anything reaches the origin. */
  | { kind: 'reset' }
  /** Answers itself with this status and headers (a CDN's 502 or 504 page); nothing reaches the origin. */
  | { kind: 'answer'; status: number; headers?: Record<string, string> }
  /** Relays the request; after `ms` without a response head answers `status` itself (a CDN timeout), else cuts. */
  | { kind: 'timeout'; status: number; ms: number }
  /** Relays, then drops both connections `ms` after the request arrived, whatever was relayed by then. */
  | { kind: 'cut-after-ms'; ms: number }
  /** Relays the response head and `bytes` bytes of its body, then drops both connections. */
  | { kind: 'cut-after-bytes'; bytes: number }
  /** Never answers and forwards nothing: a black hole. */
  | { kind: 'hang' }

/** One request as the proxy saw it, with the fate it got. */
export interface ProxiedRequest {
  n: number
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  fate: Fate
}

/** Decides each request's fate; `n` counts the proxy's requests from 0. */
export type Chooser = (request: { n: number; method: string; path: string }) => Fate

/** A proxy in front of one origin. */
export interface CuttingProxy {
  url: string
  /** Every request so far, in arrival order. */
  log: ProxiedRequest[]
  close(): Promise<void>
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer'])

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value
  return out
}

/**
 * An HTTP proxy on a loopback port in front of `origin` that treats each request as `choose` says: relays it, drops
 * the connection before, during or after the answer, answers 502/504 like a CDN, or never answers.
 */
export async function startCuttingProxy(origin: string, choose: Chooser): Promise<CuttingProxy> {
  const target = new URL(origin)
  const agent = new http.Agent({ keepAlive: true })
  const log: ProxiedRequest[] = []
  const server = http.createServer((req, res) => {
    const request = { n: log.length, method: req.method ?? 'GET', path: req.url ?? '/' }
    const fate = choose(request)
    log.push({ ...request, headers: req.headers, fate })
    if (fate.kind === 'hang') return
    if (fate.kind === 'reset') {
      req.socket.destroy()
      return
    }
    if (fate.kind === 'answer') {
      req.resume()
      cdnPage(res, fate.status, fate.headers)
      return
    }
    relay(req, res, fate)
  })

  function relay(req: http.IncomingMessage, res: http.ServerResponse, fate: Fate): void {
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...endToEnd(req.headers), host: target.host },
        agent,
      },
      (answer) => {
        const headers = endToEnd(answer.headers)
        res.writeHead(answer.statusCode ?? 502, headers)
        let budget = fate.kind === 'cut-after-bytes' ? fate.bytes : Number.POSITIVE_INFINITY
        if (budget === 0) {
          // The head alone, flushed, then the cut.
          res.flushHeaders()
          res.socket?.write('', cut)
          return
        }
        answer.on('data', (chunk: Buffer) => {
          if (budget === Number.POSITIVE_INFINITY) {
            res.write(chunk)
            return
          }
          const part = chunk.subarray(0, budget)
          budget -= part.length
          if (budget > 0) res.write(part)
          else res.write(part, cut)
        })
        answer.on('end', () => {
          if (budget > 0) res.end()
        })
        answer.on('error', cut)
      },
    )
    // Once this answer is whole the connection may carry the client's next request: that one is not this fate's.
    const cut = () => {
      if (res.writableFinished) return
      req.socket.destroy()
      upstream.destroy()
    }
    upstream.on('error', cut)
    req.on('error', cut)
    req.pipe(upstream)
    if (fate.kind === 'cut-after-ms') setTimeout(cut, fate.ms).unref()
    if (fate.kind === 'timeout') {
      setTimeout(() => {
        if (res.writableFinished) return
        if (res.headersSent) cut()
        else {
          upstream.destroy()
          cdnPage(res, fate.status)
        }
      }, fate.ms).unref()
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
        agent.destroy()
      }),
  }
}

/** The page a CDN answers with when it gives up on the origin: not the gateway's, so it has no `x-request-id`. */
function cdnPage(res: http.ServerResponse, status: number, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, { 'content-type': 'text/html', connection: 'close', ...headers })
  res.end(`<html><body><h1>${status}</h1>The origin did not answer in time.</body></html>`)
}

/** The kinds of cut `randomCuts` chooses from. */
export type CutKind = Exclude<Fate['kind'], 'pass' | 'hang'>

/** How `randomCuts` picks: which kinds, and the ranges of their `ms` and `bytes`. */
export interface RandomCutOptions {
  kinds?: CutKind[]
  maxMs?: number
  maxBytes?: number
}

/**
 * A seeded chooser that cuts each request with probability `rate`, by a kind and an amount picked from the same seeded
 * sequence; the rest pass.
 */
export function randomCuts(seed: number, rate: number, options: RandomCutOptions = {}): Chooser {
  const random = mulberry32(seed)
  const kinds = options.kinds ?? ['reset', 'answer', 'timeout', 'cut-after-ms', 'cut-after-bytes']
  const maxMs = options.maxMs ?? 60
  const maxBytes = options.maxBytes ?? 600
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
  return () => {
    if (random() >= rate) return { kind: 'pass' }
    const kind = pick(kinds)
    const ms = Math.floor(random() * maxMs)
    const status = pick([502, 504, 520, 524])
    switch (kind) {
      case 'reset':
        return { kind }
      case 'answer':
        return { kind, status }
      case 'timeout':
        return { kind, status, ms }
      case 'cut-after-ms':
        return { kind, ms }
      case 'cut-after-bytes':
        return { kind, bytes: Math.floor(random() * maxBytes) }
    }
  }
}

/** A chooser that gives the n-th request `schedule[n]`, and lets every later one pass. */
export function scheduled(schedule: Fate[]): Chooser {
  return ({ n }) => schedule[n] ?? { kind: 'pass' }
}
