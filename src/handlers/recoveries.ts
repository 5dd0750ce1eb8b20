import { GatewayError, shown } from '../errors.js'
import type { Exchange, RecoveryRoute } from '../http/dispatch.js'
import { readJsonBody } from '../http/read-body.js'
import { sendJson } from '../http/reply.js'
import { REQUEST_ID_PATTERN } from '../http/request-id.js'
import { requestBodyHash } from '../json/hash.js'
import type { Runtime } from '../runtime.js'

const NOT_FOUND = 'No recovery record with this request_id (absent, expired, purged or deleted).'

function notFound(requestId: string, extra: Record<string, unknown> = {}): GatewayError {
  return new GatewayError('recovery_not_found', NOT_FOUND, { details: { request_id: shown(requestId), ...extra } })
}

/** The five Recoveries operations for one authenticated owner. */
export function recoveriesHandler(rt: Runtime): (ex: Exchange, route: RecoveryRoute) => Promise<void> {
  const { store } = rt
  return async (ex, route) => {
    const { res, owner } = ex
    switch (route.kind) {
      case 'recoveries.list': {
        const items = await store.list(owner)
        return sendJson(res, 200, { count: items.length, items })
      }
      case 'recoveries.lookup': {
        const body = await readJsonBody(ex.req, rt.options.limits.maxRequestBytes, ex.preparsed)
        const items = await store.lookup(owner, requestBodyHash(body.value ?? body.bytes))
        return sendJson(res, 200, { items })
      }
      case 'recoveries.get': {
        // An id of the wrong shape cannot exist, so it never reaches the store (no key injection).
        const record = REQUEST_ID_PATTERN.test(route.requestId) ? await store.get(owner, route.requestId) : undefined
        if (!record) throw notFound(route.requestId)
        return sendJson(res, 200, record)
      }
      case 'recoveries.delete': {
        const deleted = REQUEST_ID_PATTERN.test(route.requestId) && (await store.delete(owner, route.requestId))
        if (!deleted) throw notFound(route.requestId, { deleted: false })
        return sendJson(res, 200, { request_id: route.requestId, deleted: true, message: 'Recovery record deleted.', reason: 'OK' })
      }
      case 'recoveries.deleteAll': {
        const { query } = ex.match
        if (query.get('all') !== 'true') {
          throw new GatewayError(
            'confirmation_required',
            'Deleting every record needs the confirmation ?all=true (try ?all=true&dry_run=true first).',
            {
              details: { deleted: 0 },
            },
          )
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
}
