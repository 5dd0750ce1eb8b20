import type { IncomingMessage, ServerResponse } from 'node:http'
import { normalisePrefix, pathUnderPrefix } from '../src/http/router.js'
import type { Gateway } from '../src/types.js'

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
  const prefix = normalisePrefix(options.prefix)
  return (req, res, next) => {
    let path = pathUnderPrefix(prefix, req.url ?? '/')
    if (path === undefined) {
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
