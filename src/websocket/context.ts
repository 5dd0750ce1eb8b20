// What a continuation carries: a response's input and output items. A socket holds its last response's; when the
// socket goes, that response's is written to the store, so a client that connects again (to any process sharing
// the store) continues from it.
import type { Runtime } from '../runtime.js'

/** The store name of the items a response's continuation carries, by the request id behind its public id. */
const contextName = (requestId: string) => `wsctx:${requestId}`

/** A response a continuation can carry on from. */
export interface Continuable {
  /** Its public id. */
  id: string
  /** The gateway's request id behind it. */
  requestId: string
  /** Its input (carried items included), then its output. */
  items: unknown[]
  /** The bytes of `items` as JSON (give or take the brackets of each turn's), held against `maxConversationBytes`. */
  bytes: number
}

/** Keeps `response`'s items for a continuation on another socket; never rejects (a failed write is logged). */
export async function keepContext(rt: Runtime, owner: string, response: Continuable): Promise<void> {
  try {
    // Counted against the owner's quota, as a background response's state is.
    await rt.store.setValue(owner, contextName(response.requestId), JSON.stringify(response.items), rt.options.recovery.ttlMs, {
      counted: true,
    })
  } catch (error) {
    rt.options.logger.warn('model-gateway: the context of a WebSocket response could not be kept', {
      requestId: response.requestId,
      error: String(error),
    })
  }
}

/** The items a continuation of `requestId` carries, if they are kept; a store that fails answers undefined. */
export async function readContext(rt: Runtime, owner: string, requestId: string): Promise<Carried | undefined> {
  const text = await rt.store.getValue(owner, contextName(requestId)).catch(() => undefined)
  if (text === undefined) return undefined
  const items = JSON.parse(text) as unknown
  return Array.isArray(items) ? { items, bytes: Buffer.byteLength(text) } : undefined
}

/** The items a continuation carries, with their bytes as JSON. */
export type Carried = Pick<Continuable, 'items' | 'bytes'>

/** The bytes of items as JSON, as `maxConversationBytes` counts them. */
export const jsonBytes = (items: unknown[]) => Buffer.byteLength(JSON.stringify(items))
