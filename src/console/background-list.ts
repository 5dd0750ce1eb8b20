// The background responses an owner started, for the console: the store keeps each owner's newest ids in one small
// value (written at create, only while the console is on); their state is read as a retrieve reads it.
import { isGivenUp } from '../background/follow.js'
import { lapseClock } from '../background/lapse.js'
import { readHead } from '../background/state.js'
import { MODEL_ROUTES } from '../dialects/index.js'
import type { Runtime } from '../runtime.js'

/** The store name of an owner's list of background ids (store names are a word and a digest: the owner's own). */
const listName = (owner: string) => `consolebg:${owner}`
/** How many of an owner's newest background responses the console lists. */
export const MAX_LISTED_BACKGROUND = 50

/** One background response as the console lists it. */
export interface BackgroundItem {
  id: string
  /** `queued`, `in_progress`, `completed`, `failed`, `cancelled`, `incomplete`, or `gone` once expired or deleted. */
  status: string
  /** Events kept so far. */
  events: number
  model: string | undefined
  /** Unix seconds. */
  created_at: number
}

interface Noted {
  id: string
  requestId: string
  model: string
  created_at: number
}

const FORMATS = MODEL_ROUTES.flatMap((route) => (route.background ? [route.background] : []))

/** The ids each owner started, noted as they start, read back with each one's state. */
export class BackgroundList {
  readonly #rt: Runtime
  /** One write at a time per owner in this process: each rewrites the owner's list. */
  readonly #writing = new Map<string, Promise<void>>()

  constructor(rt: Runtime) {
    this.#rt = rt
  }

  /** Notes a background response just created (never rejects: a failure is a warn line). */
  note(owner: string, requestId: string, id: string, model: string): void {
    const previous = this.#writing.get(owner) ?? Promise.resolve()
    const next = previous.then(async () => {
      const list = await this.#read(owner)
      list.unshift({ id, requestId, model, created_at: Math.floor(Date.now() / 1000) })
      const kept = list.slice(0, MAX_LISTED_BACKGROUND)
      await this.#rt.store.setValue(owner, listName(owner), JSON.stringify(kept), this.#rt.options.recovery.ttlMs)
    })
    const settled = next.catch((error: unknown) =>
      this.#rt.options.logger.warn('model-gateway: the console could not note a background response', { requestId, error: String(error) }),
    )
    this.#writing.set(owner, settled)
    void settled.then(() => {
      if (this.#writing.get(owner) === settled) this.#writing.delete(owner)
    })
  }

  /** The owner's background responses, newest first, each in its state now. */
  async list(owner: string): Promise<BackgroundItem[]> {
    const noted = await this.#read(owner)
    return Promise.all(noted.map((one) => this.#state(owner, one)))
  }

  async #state(owner: string, one: Noted): Promise<BackgroundItem> {
    const item = { id: one.id, model: one.model, created_at: one.created_at }
    const here = this.#rt.background.get(owner, one.requestId)
    if (here) return { ...item, status: here.status, events: here.events.length }
    const head = await readHead(this.#rt.store, owner, one.requestId).catch(() => undefined)
    if (!head) return { ...item, status: 'gone', events: 0 }
    // A call given up (its process stopped before it ended) is failed, as a retrieve says.
    const failed = await isGivenUp(this.#rt.store, owner, one.requestId, head, lapseClock(this.#rt.options)).catch(() => false)
    return { ...item, status: failed ? 'failed' : head.status, events: head.events }
  }

  async #read(owner: string): Promise<Noted[]> {
    const text = await this.#rt.store.getValue(owner, listName(owner))
    if (text === undefined) return []
    try {
      const list = JSON.parse(text) as unknown
      return Array.isArray(list) ? (list as Noted[]).filter((one) => typeof one?.id === 'string' && isKnownId(one)) : []
    } catch {
      return []
    }
  }
}

/** Whether a noted id is one a background format gave (so a stored value can only name real calls). */
function isKnownId(one: Noted): boolean {
  return FORMATS.some((format) => format.requestIdOf(one.id) === one.requestId)
}
