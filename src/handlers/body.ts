import type { Exchange } from '../http/dispatch.js'
import { type BodyRead, bytesHeldBeforeReading, type RequestBody, readJsonBody } from '../http/read-body.js'
import type { Runtime } from '../runtime.js'

/**
 * Reads a request's JSON body within the body budget and runs `work` with it; the body's bytes count against
 * the gateway's and the owner's budgets until `work` is done (they are forwarded, and maybe kept, until then).
 */
export async function withBody<T>(
  rt: Runtime,
  ex: Exchange,
  needs: Pick<BodyRead, 'readFields' | 'elementFields' | 'readsMembers'>,
  work: (body: RequestBody) => Promise<T>,
): Promise<T> {
  // Member by member: a spread of `needs` copied its members through the runtime's generic path, on every call.
  const read: BodyRead = {
    preparsed: ex.preparsed,
    readFields: needs.readFields,
    elementFields: needs.elementFields,
    readsMembers: needs.readsMembers,
    reservation: undefined,
  }
  const reservation = rt.bodyBudget.reserve(ex.owner, bytesHeldBeforeReading(ex.req, read, rt.bodyLimits))
  read.reservation = reservation
  try {
    return await work(await readJsonBody(ex.req, rt.bodyLimits, read))
  } finally {
    reservation.release()
  }
}
