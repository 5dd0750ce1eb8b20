import { GatewayError, invalidField, shown } from '../errors.js'
import type { RecoverySummary } from '../types.js'

/** The most items one page of `GET /v1/recoveries` may hold. */
export const MAX_PAGE = 1000

/**
 * A page of `GET /v1/recoveries`: `limit` items (1..1000) after the record `after` (a request id from the previous
 * page), newest first; undefined for the whole list, as the service description has it.
 */
export function listPage(query: URLSearchParams): { limit: number; after: string | undefined } | undefined {
  const limit = query.get('limit')
  const after = query.get('after') ?? undefined
  if (limit === null && after === undefined) return undefined
  const n = limit === null ? MAX_PAGE : Number(limit)
  if (!/^\d+$/.test(limit ?? '1') || !Number.isSafeInteger(n) || n < 1 || n > MAX_PAGE) {
    throw invalidField('limit', `'limit' must be an integer from 1 to ${MAX_PAGE}.`)
  }
  return { limit: n, after }
}

/** Summaries serialised per slice, with a turn of the event loop between slices. */
const SLICE = 1000

/**
 * The body of a whole list, `{"count":N,"items":[…]}`, built a slice of items at a time with a turn of the event loop
 * between slices: one `JSON.stringify` of 300 000 summaries would hold the loop for a good part of a second.
 */
export async function listText(items: RecoverySummary[]): Promise<string> {
  const parts: string[] = []
  for (let i = 0; i < items.length; i += SLICE) {
    if (i > 0) await new Promise(setImmediate)
    parts.push(JSON.stringify(items.slice(i, i + SLICE)).slice(1, -1))
  }
  return `{"count":${items.length},"items":[${parts.join(',')}]}`
}

/**
 * What `DELETE /v1/recoveries` was asked to do. Deleting everything takes exactly `all=true` and, optionally,
 * `dry_run=true|false`, each once and spelled exactly so: anything else (a repeated, misspelt, encoded or unknown
 * parameter) is refused before a record is touched, since a misread dry run would delete for real.
 */
export function deleteAllMode(rawQuery: string): 'dry_run' | 'delete' {
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
