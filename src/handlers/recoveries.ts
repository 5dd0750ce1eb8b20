import { GatewayError, invalidField, shown } from '../errors.js'
import type { Exchange, RecoveryRoute } from '../http/dispatch.js'
import { sendJson, sendJsonText } from '../http/reply.js'
import { REQUEST_ID_PATTERN } from '../http/request-id.js'
import { ClientSink } from '../http/sink.js'
import { jsonBytesInSlices } from '../json/text-in-slices.js'
import { channels } from '../observe/channels.js'
import { reportRecoveryOperation } from '../observe/recovery-operation.js'
import { bodyHash } from '../recovery/body-hash.js'
import type { Runtime } from '../runtime.js'
import { withBody } from './body.js'
import { deleteAllMode, listPage, listText } from './recovery-queries.js'
import { cancelCall, resumeStream } from './recovery-stream.js'

const NOT_FOUND = 'No recovery record with this request_id (absent, expired, purged or deleted).'

/** The head of a record's answer, as `sendJson` writes it. */
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

function notFound(requestId: string, extra: Record<string, unknown> = {}): GatewayError {
  return new GatewayError('recovery_not_found', NOT_FOUND, { details: { request_id: shown(requestId), ...extra } })
}

/** The Recoveries operations for one authenticated owner, each reported on `recovery:operation` when someone listens. */
export function recoveriesHandler(rt: Runtime): (ex: Exchange, route: RecoveryRoute) => Promise<void> {
  const serve = serveRecoveries(rt)
  return (ex, route) => (channels.recoveryOperation.hasSubscribers ? reportRecoveryOperation(rt.id, ex, route, serve) : serve(ex, route))
}

function serveRecoveries(rt: Runtime): (ex: Exchange, route: RecoveryRoute) => Promise<void> {
  const { store } = rt
  return async (ex, route) => {
    const { res, owner } = ex
    switch (route.kind) {
      case 'recoveries.list': {
        const page = listPage(ex.match.query)
        if (!page) {
          const all = await store.list(owner)
          return sendJsonText(res, 200, await listText(all))
        }
        const found = await store.listPage(owner, page)
        if (!found) {
          throw invalidField(
            'after',
            `No record with request_id '${shown(page.after ?? '')}' to continue after; list again without 'after'.`,
          )
        }
        return sendJson(res, 200, { count: found.items.length, items: found.items, has_more: found.hasMore })
      }
      case 'recoveries.lookup': {
        const items = await withBody(rt, ex, { readsMembers: false }, async (body) => store.lookup(owner, await bodyHash(body, owner)))
        return sendJson(res, 200, { items })
      }
      case 'recoveries.get': {
        // An id of the wrong shape cannot exist, so it never reaches the store (no key injection).
        const record = REQUEST_ID_PATTERN.test(route.requestId) ? await store.get(owner, route.requestId) : undefined
        if (!record) throw notFound(route.requestId)
        // Written a slice at a time: `JSON.stringify` of a 30 MB record stalled every other request.
        const bytes = (await jsonBytesInSlices(record)) as Buffer
        return new ClientSink(res, rt.clientDeadlines.write).complete({ status: 200, headers: JSON_HEADERS }, bytes)
      }
      case 'recoveries.delete': {
        const deleted = REQUEST_ID_PATTERN.test(route.requestId) && (await store.delete(owner, route.requestId))
        if (!deleted) throw notFound(route.requestId, { deleted: false })
        return sendJson(res, 200, { request_id: route.requestId, deleted: true, message: 'Recovery record deleted.', reason: 'OK' })
      }
      case 'recoveries.stream':
        return resumeStream(rt, ex, route.requestId)
      case 'recoveries.cancel':
        return cancelCall(rt, ex, route.requestId)
      case 'recoveries.deleteAll': {
        if (deleteAllMode(ex.match.rawQuery) === 'dry_run') {
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
