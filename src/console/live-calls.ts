// The calls running now, as the console shows them: who asked, which model, since when, how many bytes went to the
// client so far. Kept only while the console is on; fed by the call:start and call:end channels, and by the
// dispatcher handing each model call's exchange over (its response, whose socket counts the bytes).
import diagnosticsChannel from 'node:diagnostics_channel'
import type { ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { type CallEndMessage, type CallStartMessage, gatewayChannels } from '../observe/channels.js'

/** One running call, without its body. */
export interface LiveCall {
  requestId: string
  owner: string
  model: string
  operation: string
  stream: boolean
  /** Ms since the request reached the gateway. */
  elapsedMs: number
  /** Bytes written to the client's connection so far, headers included; null for a background call (no client). */
  bytes: number | null
  /** Whether the call runs in the background. */
  background: boolean
}

interface Watched {
  res: ServerResponse
  /** The socket's count when the call began: a kept-alive socket counts every request it carried. */
  base: number
  /** The bytes counted when the response closed (a whole call goes on after its client left). */
  final?: number
}

interface Running {
  start: CallStartMessage
  watched: Watched | undefined
}

/** How many calls are watched at most: past it new ones are shown without their bytes. */
const MAX_WATCHED = 10_000

/** The running calls of one gateway, for the console. */
export class LiveCalls {
  readonly #gatewayId: string
  readonly #watched = new Map<string, Watched>()
  readonly #running = new Map<string, Running>()
  readonly #listeners = new Set<() => void>()
  readonly #onStart = (message: unknown) => this.#started(message as CallStartMessage)
  readonly #onEnd = (message: unknown) => this.#ended(message as CallEndMessage)

  readonly #isBackground: (owner: string, requestId: string) => boolean

  /** `isBackground`: whether a call runs in the background (its create's response is not the call's client). */
  constructor(gatewayId: string, isBackground: (owner: string, requestId: string) => boolean) {
    this.#gatewayId = gatewayId
    this.#isBackground = isBackground
    diagnosticsChannel.subscribe(gatewayChannels.callStart, this.#onStart)
    diagnosticsChannel.subscribe(gatewayChannels.callEnd, this.#onEnd)
  }

  /** A model call's response, handed over before the call is read: its bytes are counted from here. */
  watch(requestId: string, res: ServerResponse): void {
    if (this.#watched.size >= MAX_WATCHED) return
    const watched: Watched = { res, base: res.socket?.bytesWritten ?? 0 }
    this.#watched.set(requestId, watched)
    // A call refused before it started (a 400, a 404) never publishes call:start: it is forgotten with its response.
    // One that started stays until its call:end (a whole call runs on after its client left), its count frozen.
    res.once('close', () => {
      watched.final = bytesOf(watched)
      this.#watched.delete(requestId)
    })
  }

  /** Told whenever a call starts or ends; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The calls running now, oldest first: every owner's, or one owner's. */
  list(owner?: string): LiveCall[] {
    const now = performance.now()
    const calls: LiveCall[] = []
    for (const [requestId, { start, watched }] of this.#running) {
      if (owner !== undefined && start.owner !== owner) continue
      calls.push({
        requestId,
        owner: start.owner,
        model: start.model,
        operation: start.operation,
        stream: start.stream,
        elapsedMs: Math.max(0, Math.round(now - start.startedAt)),
        bytes: watched ? bytesOf(watched) : null,
        background: watched === undefined,
      })
    }
    return calls
  }

  /** Stops listening to the channels. */
  close(): void {
    diagnosticsChannel.unsubscribe(gatewayChannels.callStart, this.#onStart)
    diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, this.#onEnd)
    this.#listeners.clear()
    this.#running.clear()
    this.#watched.clear()
  }

  #started(message: CallStartMessage): void {
    if (message.gatewayId !== this.#gatewayId) return
    const watched = this.#isBackground(message.owner, message.requestId) ? undefined : this.#watched.get(message.requestId)
    this.#running.set(message.requestId, { start: message, watched })
    this.#changed()
  }

  #ended(message: CallEndMessage): void {
    if (message.gatewayId !== this.#gatewayId) return
    if (this.#running.delete(message.requestId)) this.#changed()
  }

  #changed(): void {
    for (const listener of this.#listeners) listener()
  }
}

/** The bytes written to a watched call's client so far. */
function bytesOf(watched: Watched): number {
  if (watched.final !== undefined) return watched.final
  return Math.max(0, (watched.res.socket?.bytesWritten ?? watched.base) - watched.base)
}
