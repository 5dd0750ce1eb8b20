// The calls a client ran in the background, by id: their state, their events from a sequence number, a cancel and
// a delete. Private to their owner: another owner's id is simply not found.
import { setTimeout as sleep } from 'node:timers/promises'
import { followHere, followStored, isGivenUp, shownObject, streamEvents } from '../background/follow.js'
import { lapseClock } from '../background/lapse.js'
import { type BackgroundHead, backgroundNames, DELETE_MARK, hasEnded, readHead, removeCall } from '../background/state.js'
import type { BackgroundFormat } from '../dialects/index.js'
import { GatewayError, invalidField, shown } from '../errors.js'
import type { BackgroundRoute, Exchange } from '../http/dispatch.js'
import { sendJson } from '../http/reply.js'
import { streamHead } from '../recovery/stream/follow.js'
import type { Runtime } from '../runtime.js'

/** How long a cancel or delete asked for here waits for the process running the call to stop it. */
const STOP_WAIT_MS = 5_000
const STOP_POLL_MS = 100

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No response found with id '${shown(id)}'.`, { param: 'response_id' })
}

/** `starting_after`: the sequence number after which events are sent; -1 (all of them) when absent. */
function startingAfter(query: URLSearchParams): number {
  const raw = query.get('starting_after')
  if (raw === null) return -1
  if (!/^\d{1,15}$/.test(raw)) invalidField('starting_after', "'starting_after' must be a sequence number (an integer ≥ 0).")
  return Number(raw)
}

/** Whether a call kept in the store still runs: not ended, and not given up by readers (lapse.ts). */
async function stillRuns(rt: Runtime, owner: string, requestId: string, head: BackgroundHead): Promise<boolean> {
  return !hasEnded(head.status) && !(await isGivenUp(rt.store, owner, requestId, head, lapseClock(rt.options)))
}

/** Waits for the process running a call elsewhere to end it after a cancel; the head last read. */
async function untilEnded(rt: Runtime, owner: string, requestId: string, head: BackgroundHead): Promise<BackgroundHead> {
  for (let waited = 0; waited < STOP_WAIT_MS && (await stillRuns(rt, owner, requestId, head)); waited += STOP_POLL_MS) {
    await sleep(STOP_POLL_MS)
    head = (await readHead(rt.store, owner, requestId)) ?? head
  }
  return head
}

/** Serves one background-call route for an authenticated owner. */
export async function serveBackground(rt: Runtime, ex: Exchange, route: BackgroundRoute): Promise<void> {
  const { format, id } = route
  const { owner, res } = ex
  const requestId = format.requestIdOf(id)
  if (requestId === undefined) throw notFound(id)
  const here = rt.background.get(owner, requestId)
  // A delete asked for elsewhere is seen before anything of the call is served: the process running it may write
  // its head again for up to a second before it sees the delete itself.
  const [mark, head] = await Promise.all([
    // A call running here is still served while the store is down; one that is not fails on its head's read.
    rt.store.getValue(owner, backgroundNames.cancel(requestId)).catch(() => undefined),
    here ? undefined : readHead(rt.store, owner, requestId),
  ])
  if (mark === DELETE_MARK) {
    here?.deleted()
    throw notFound(id)
  }
  if (!here && !head) throw notFound(id)
  switch (route.action) {
    case 'retrieve': {
      if (ex.match.query.get('stream') !== 'true') {
        const object = here
          ? here.object
          : await shownObject(rt.store, format, owner, requestId, head as BackgroundHead, lapseClock(rt.options))
        if (!object) throw notFound(id)
        return sendJson(res, 200, object)
      }
      const after = startingAfter(ex.match.query)
      return streamEvents(rt, res, streamHead(), (sink) =>
        here
          ? followHere(here, after, sink)
          : followStored({ store: rt.store, format, owner, requestId, clock: lapseClock(rt.options) }, after, sink),
      )
    }
    case 'cancel': {
      if (here) {
        here.stop('cancelled')
        await here.ended
        return sendJson(res, 200, here.object)
      }
      let stored = head as BackgroundHead
      if (await stillRuns(rt, owner, requestId, stored)) {
        await rt.store.setValue(owner, backgroundNames.cancel(requestId), 'cancel', rt.options.recovery.ttlMs)
        stored = await untilEnded(rt, owner, requestId, stored)
      }
      const object = await shownObject(rt.store, format, owner, requestId, stored, lapseClock(rt.options))
      if (!object) throw notFound(id)
      return sendJson(res, 200, object)
    }
    case 'delete':
      return sendJson(res, 200, await deleteCall(rt, format, owner, requestId, here ? undefined : (head as BackgroundHead), id))
  }
}

async function deleteCall(
  rt: Runtime,
  format: BackgroundFormat,
  owner: string,
  requestId: string,
  head: BackgroundHead | undefined,
  id: string,
): Promise<unknown> {
  const here = rt.background.get(owner, requestId)
  if (here) {
    // It stops, and removes what was kept of it instead of writing its last state.
    here.deleted()
    await here.ended
    return format.deleted(id)
  }
  const stored = head as BackgroundHead
  if (await stillRuns(rt, owner, requestId, stored)) {
    // A call whose lease passed but which readers have not given up is deleted as a running one: its process may
    // come back and write again. The process running it sees this within a second, stops it and removes whatever it
    // wrote meanwhile, the mark last; kept as long as the call's state, so a head written again by a process that
    // then stopped stays hidden.
    await rt.store.setValue(owner, backgroundNames.cancel(requestId), DELETE_MARK, rt.options.recovery.ttlMs)
    await removeCall(rt.store, owner, requestId, stored.segments, { keepMark: true })
  } else {
    await removeCall(rt.store, owner, requestId, stored.segments)
  }
  return format.deleted(id)
}
