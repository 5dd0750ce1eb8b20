import type { IncomingMessage, ServerResponse } from 'node:http'
import { type PreparsedBody, isJsonContentType, obtainBody } from './body.js'
import type { GatewayContext } from './context.js'
import { GatewayError } from './errors.js'
import { requestBodyHash } from './hash.js'
import { REQUEST_ID_PATTERN } from './request-id.js'
import { sendJson } from './responses.js'
import type { Route } from './router.js'

type RecoveryRoute = Extract<Route, { kind: `recoveries.${string}` }>

function notFound(res: ServerResponse, requestId: string, extra: Record<string, unknown> = {}): void {
  sendJson(res, 404, {
    request_id: requestId,
    ...extra,
    message: 'No recovery record with this request_id (absent, expired, purged or deleted).',
    reason: 'RECOVERY_NOT_FOUND',
  })
}

/** Serves the five Recoveries operations for one authenticated owner. */
export async function serveRecoveries(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: RecoveryRoute,
  owner: string,
  query: URLSearchParams,
  preparsed: PreparsedBody | undefined,
): Promise<void> {
  const { store } = ctx
  switch (route.kind) {
    case 'recoveries.list': {
      const items = await store.list(owner)
      return sendJson(res, 200, { count: items.length, items })
    }
    case 'recoveries.lookup': {
      if (!isJsonContentType(req.headers['content-type'])) {
        throw new GatewayError('unsupported_media_type', "Content-Type must be 'application/json'.")
      }
      const body = await obtainBody(req, ctx.options.maxRequestBytes, preparsed)
      const items = await store.lookup(owner, requestBodyHash(body.value ?? body.bytes))
      return sendJson(res, 200, { items })
    }
    case 'recoveries.get': {
      // An id of the wrong shape cannot exist, so it never reaches the store (no key injection).
      const record = REQUEST_ID_PATTERN.test(route.requestId) ? await store.get(owner, route.requestId) : undefined
      return record ? sendJson(res, 200, record) : notFound(res, route.requestId)
    }
    case 'recoveries.delete': {
      const deleted = REQUEST_ID_PATTERN.test(route.requestId) && (await store.delete(owner, route.requestId))
      if (!deleted) return notFound(res, route.requestId, { deleted: false })
      return sendJson(res, 200, { request_id: route.requestId, deleted: true, message: 'Recovery record deleted.', reason: 'OK' })
    }
    case 'recoveries.deleteAll': {
      if (query.get('all') !== 'true') {
        return sendJson(res, 400, {
          deleted: 0,
          message: 'Deleting every record needs the confirmation ?all=true (try ?all=true&dry_run=true first).',
          reason: 'CONFIRMATION_REQUIRED',
        })
      }
      if (query.get('dry_run') === 'true') {
        const wouldDelete = await store.deleteAll(owner, { dryRun: true })
        return sendJson(res, 200, {
          deleted: 0,
          would_delete: wouldDelete,
          message: `Dry run: ${wouldDelete} record(s) would be deleted.`,
          reason: 'DRY_RUN',
        })
      }
      const deleted = await store.deleteAll(owner, { dryRun: false })
      return sendJson(res, 200, { deleted, message: `${deleted} record(s) deleted.`, reason: 'OK' })
    }
  }
}
