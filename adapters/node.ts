import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Gateway } from '../src/gateway.js'

/** Options of `nodeHandler`. */
export interface NodeHandlerOptions {
  /** Mount path the gateway lives under, e.g. `/ai`; requests outside it are not the gateway's. @default '' */
  prefix?: string
}

/** A `(req, res, next?)` handler for `node:http` (and Connect-style stacks). */
export function nodeHandler(
  gateway: Gateway,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '')
  return (req, res, next) => {
    const url = req.url ?? '/'
    let path = url
    if (prefix) {
      const rest = url.slice(prefix.length)
      path = url.startsWith(prefix) && (rest === '' || rest[0] === '/' || rest[0] === '?') ? rest || '/' : ''
    }
    if (path === '') {
      if (next) return next()
      path = '/' // outside the prefix with no one to pass to: answered with the gateway's 404, never routed
    }
    gateway.handle(req, res, { path, claimUnknown: !next }).then(
      (handled) => {
        if (!handled) next?.()
      },
      (error: unknown) => (next ? next(error) : res.destroy(error as Error)),
    )
  }
}
