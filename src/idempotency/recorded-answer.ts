import type { CallSpec } from '../call/call-spec.js'
import type { Runtime } from '../runtime.js'
import type { Fingerprint } from './fingerprint.js'
import type { KeptAnswer } from './recent-answers.js'

/**
 * The answer of the same call kept as a recovery record within `idempotency.retryWindowMs`, newest first: an SDK
 * retry after its first attempt's connection broke. Only a retry pays for this lookup.
 */
export async function findRecordedAnswer(rt: Runtime, spec: CallSpec, fingerprint: Fingerprint): Promise<KeptAnswer | undefined> {
  const since = (Date.now() - rt.options.idempotency.retryWindowMs) / 1000
  const summaries = await rt.store.lookup(spec.owner, fingerprint.bodyHash)
  for (const summary of summaries) {
    if (summary.created_at < Math.floor(since)) break
    const record = await rt.store.get(spec.owner, summary.request_id)
    if (!record || record.request.endpoint !== spec.operation || record.request.model !== spec.model.id) continue
    return {
      requestId: record.request_id,
      status: record.response.status,
      contentType: record.response.content_type,
      body: Buffer.from(record.response.body_raw, 'utf8'),
    }
  }
  return undefined
}
