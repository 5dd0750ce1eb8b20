import { GatewayError, shown } from '../errors.js'
import type { Exchange, RecoveryRoute } from '../http/dispatch.js'
import { sendJson } from '../http/reply.js'
import { REQUEST_ID_PATTERN } from '../http/request-id.js'
import { bodyHash } from '../recovery/body-hash.js'
import type { Runtime } from '../runtime.js'
import { withBody } from './body.js'

const NOT_FOUND = 'No recovery record with this request_id (absent, expired, purged or deleted).'

function notFound(requestId: string, extra: Record<string, unknown> = {}): GatewayError {
  return new GatewayError('recovery_not_found', NOT_FOUND, { details: { request_id: shown(requestId), ...extra } })
}

/**
 * What `DELETE /v1/recoveries` was asked to do. Deleting everything takes exactly `all=true` and, optionally,
 * `dry_run=true|false`, each once and spelled exactly so: anything else (a repeated, misspelt, encoded or unknown
 * parameter) is refused before a record is touched, since a misread dry run would delete for real.
 */
function deleteAllMode(rawQuery: string): 'dry_run' | 'delete' {
  const seen = new Map<string, string>()
  for (const pair of rawQuery === '' ? [] : rawQuery.split('&')) {
    const eq = pair.indexOf('=')
    const name = eq === -1 ? pair : pair.slice(0, eq)
    const value = eq === -1 ? '' : pair.slice(eq + 1)
    if (name !== 'all' && name !== 'dry_run') {
      throw new GatewayError(
        'invalid_parameter',
        `Unknown query parameter '${shown(name)}': deleting every record takes all=true and dry_run=true|false only.`,
        {
          details: { deleted: 0, param: shown(name) },
        },
      )
    }
    if (seen.has(name)) {
      throw new GatewayError('invalid_parameter', `The query parameter '${name}' is given more than once.`, {
        details: { deleted: 0, param: name },
      })
    }
    seen.set(name, value)
  }
  const dryRun = seen.get('dry_run')
  if (dryRun !== undefined && dryRun !== 'true' && dryRun !== 'false') {
    throw new GatewayError('invalid_parameter', "'dry_run' must be exactly true or false.", { details: { deleted: 0, param: 'dry_run' } })
  }
  if (seen.get('all') !== 'true') {
    throw new GatewayError(
      'confirmation_required',
      'Deleting every record needs the confirmation ?all=true (try ?all=true&dry_run=true first).',
      {
        details: { deleted: 0 },
      },
    )
  }
  return dryRun === 'true' ? 'dry_run' : 'delete'
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
        const items = await withBody(rt, ex, undefined, async (body) => store.lookup(owner, await bodyHash(body)))
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
