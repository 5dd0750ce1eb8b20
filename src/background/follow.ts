// Reading a background call's events after a sequence number: from the process running it as they come, else from
// the store, polled as often as the running process writes, until its head says it ended (or its lease ran out).
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BackgroundFormat } from '../dialects/index.js'
import type { RecoveryStore } from '../recovery/store/recovery-store.js'
import { BACKGROUND_TICK_MS, keptEvent, type RunLog } from './run-log.js'
import { type BackgroundHead, hasEnded, readHead, readSegment, STOPPED_MESSAGE } from './state.js'

/** Whether a running call's process stopped vouching for it: its lease ran out before it ended. */
export const leaseLapsed = (head: BackgroundHead) => !hasEnded(head.status) && head.leaseUntil < Date.now()

/** A call's object as a retrieve shows it: a call whose process stopped is `failed`, saying so. */
export function shownObject(format: BackgroundFormat, head: BackgroundHead): Record<string, unknown> {
  return leaseLapsed(head) ? format.ended(head.object, 'failed', STOPPED_MESSAGE) : head.object
}

/** Writes the events of a call running here after `after`, then those to come, until it ends or the client leaves. */
export function followHere(run: RunLog, after: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    let stop = () => {}
    const gone = () => {
      stop()
      resolve()
    }
    res.once('close', gone)
    stop = run.follow(after, {
      event: (sse) => void res.write(sse),
      end: () => {
        res.off('close', gone)
        res.end()
        resolve()
      },
    })
  })
}

/** Where a call another process runs is read from. */
export interface StoredCall {
  store: RecoveryStore
  format: BackgroundFormat
  owner: string
  requestId: string
}

/** Writes the events of a call kept in the store after `after`, following it while it runs elsewhere. */
export async function followStored(call: StoredCall, after: number, res: ServerResponse): Promise<void> {
  const { store, format, owner, requestId } = call
  let gone = false
  res.once('close', () => {
    gone = true
  })
  let seq = -1
  let segment = 0
  while (!gone) {
    const head = await readHead(store, owner, requestId)
    // Deleted meanwhile: nothing more will come.
    if (!head) break
    while (segment < head.segments && !gone) {
      for (const sse of await readSegment(store, owner, requestId, segment)) if (++seq > after) res.write(sse)
      segment++
    }
    if (hasEnded(head.status)) break
    if (leaseLapsed(head)) {
      const told = format.endEvent(shownObject(format, head))
      if (told && ++seq > after) res.write(keptEvent(told, seq))
      break
    }
    await sleep(BACKGROUND_TICK_MS)
  }
  res.end()
}
