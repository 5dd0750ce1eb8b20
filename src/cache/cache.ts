// The exact-match response cache, as a wrapper around a model call: it looks the call up, serves a hit without an
// upstream call, and otherwise runs the call (one per key at a time: identical misses wait for it) and keeps its
// answer when it came whole. The call path itself only shows the cache the upstream's answer (`CallSpec.capture`).
import type { IncomingHttpHeaders } from 'node:http'
import { performance } from 'node:perf_hooks'
import type Keyv from 'keyv'
import { NO_USAGE } from '../call/answer-facts.js'
import type { CallSpec } from '../call/call-spec.js'
import { metered } from '../call/metering.js'
import { endMessage, runCall } from '../call/run-call.js'
import { reportDropped } from '../call/translation.js'
import { clientFraming } from '../dialects/framing/index.js'
import type { Exchange } from '../http/dispatch.js'
import { withRequestId } from '../http/request-id.js'
import type { ClientSink } from '../http/sink.js'
import { turnEnd } from '../http/turn-end.js'
import { callStartMessage } from '../observe/call-message.js'
import { type CacheMessage, channels } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import { isRedisKeyv } from '../store/redis-link.js'
import type { GatewayLogger } from '../types.js'
import { AnswerTaking } from './capture.js'
import { checkAnswer } from './complete.js'
import { type CacheKey, cacheKey } from './key.js'
import { KeyMemo } from './key-memo.js'
import type { ResolvedCacheOptions } from './options.js'
import { RedisAnswers } from './redis-answers.js'
import { type AnswerStore, type CachedAnswer, MemoryAnswers } from './store.js'
import type { CacheFilter } from './types.js'
import { type HitBody, hitBody } from './write-hit.js'

/** The response header that says what the cache did. */
export const CACHE_HEADER = 'x-model-gateway-cache'

/** What a request's `Cache-Control` asks of the cache: `no-store` neither reads nor keeps; `no-cache` keeps, fresh. */
function directiveOf(headers: IncomingHttpHeaders): 'no-store' | 'no-cache' | undefined {
  const value = headers['cache-control']
  if (value === undefined) return undefined
  const text = value.toLowerCase()
  if (/(^|[\s,])no-store([\s,]|$)/.test(text)) return 'no-store'
  if (/(^|[\s,])no-cache([\s,]|$)/.test(text)) return 'no-cache'
  return undefined
}

/** A call running for a key: what an identical call waits on is made by the first such call (most have none). */
interface Running {
  kept?: Promise<CachedAnswer | undefined>
  settle?: (answer: CachedAnswer | undefined) => void
}

/** The share of `cache.maxBytes` the keys of recent calls may hold beside the answers (in this process, whatever the store). */
export const KEY_MEMO_SHARE = 1 / 16

/** One gateway's response cache. */
export class ResponseCache {
  readonly #options: ResolvedCacheOptions
  readonly #store: AnswerStore
  readonly #logger: GatewayLogger
  /** The calls running now for a key, which identical misses wait for: each settles with the answer it kept, if any. */
  readonly #running = new Map<string, Running>()
  /** The store writes of answers already served, which `flush` waits for. */
  readonly #writing = new Set<Promise<void>>()
  /** The keys of calls that were hits, by their bytes, within a sixteenth of `maxBytes` (`KEY_MEMO_SHARE`). */
  readonly #keys: KeyMemo

  /** With a Redis `store`, the cache lives there (every process shares it); else in this process, within `maxBytes`. */
  constructor(options: ResolvedCacheOptions, store: Keyv | undefined, logger: GatewayLogger) {
    this.#options = options
    this.#logger = logger
    this.#keys = new KeyMemo(Math.floor(options.maxBytes * KEY_MEMO_SHARE))
    this.#store =
      store && isRedisKeyv(store)
        ? new RedisAnswers(store, (error) => logger.warn('model-gateway: cache store error', { error: String(error) }))
        : new MemoryAnswers(options.maxBytes)
  }

  /** Removes the cached answers of an owner, a model, both, or (no filter) every one; resolves how many went. */
  delete(filter: CacheFilter = {}): Promise<number> {
    return this.#store.delete(filter)
  }

  /** Resolves once every answer served so far is written to the store (or failed to be): `close()` waits for it. */
  async flush(): Promise<void> {
    while (this.#writing.size > 0) await Promise.all(this.#writing)
  }

  /** Runs a model call through the cache (the wrapper `serveModelCall` takes). */
  readonly serveCall = (rt: Runtime, ex: Exchange, spec: CallSpec, client: ClientSink): Promise<void> => this.#serve(rt, ex, spec, client)

  async #serve(rt: Runtime, ex: Exchange, spec: CallSpec, client: ClientSink): Promise<void> {
    const directive = directiveOf(ex.req.headers)
    const call = { model: spec.model.id, operation: spec.operation, owner: spec.owner, stream: spec.stream }
    if (directive === 'no-store' || !this.#options.models(call)) return this.#bypass(rt, ex, spec, client)
    const made = cacheKey(spec, this.#options.scope === 'shared', this.#keys)
    const key = made instanceof Promise ? await made : made
    if (directive === 'no-cache') return void (await this.#miss(rt, ex, spec, client, key, 'bypass'))
    const other = this.#running.get(key.id)
    if (other) {
      // The same call is running here: its answer serves this one too, whatever its framing or dialect.
      other.kept ??= new Promise((resolve) => {
        other.settle = resolve
      })
      const answer = await other.kept
      if (answer && (await this.#hit(rt, spec, client, answer))) return
      return void (await this.#miss(rt, ex, spec, client, key))
    }
    // An answer this process holds is served at once: no call to register for others to wait on, no store to ask.
    const held = this.#store.getNow?.(key.id)
    if (held && (await this.#hit(rt, spec, client, held, true))) {
      key.remember?.()
      return
    }
    const running: Running = {}
    this.#running.set(key.id, running)
    let kept: CachedAnswer | undefined
    try {
      // A store that answers at once (memory) was asked above: nothing is there to wait for.
      const found = this.#store.getNow
        ? undefined
        : await this.#store.get(key.id).catch((error: unknown) => {
            this.#logger.warn('model-gateway: the cache could not be read; the call goes upstream', {
              requestId: spec.requestId,
              error: String(error),
            })
            return undefined
          })
      if (found && (await this.#hit(rt, spec, client, found))) {
        key.remember?.()
        kept = found
        return
      }
      kept = await this.#miss(rt, ex, spec, client, key)
    } finally {
      this.#running.delete(key.id)
      running.settle?.(kept)
    }
  }

  #bypass(rt: Runtime, ex: Exchange, spec: CallSpec, client: ClientSink): Promise<void> {
    ex.res.setHeader(CACHE_HEADER, 'bypass')
    spec.cache = 'bypass'
    publish(rt, spec, 'bypass')
    return runCall(rt, spec, client)
  }

  /** Runs the call upstream and keeps its answer when it came whole (`said`: `bypass` when no lookup was made); resolves the answer kept. */
  async #miss(
    rt: Runtime,
    ex: Exchange,
    spec: CallSpec,
    client: ClientSink,
    key: CacheKey,
    said: 'miss' | 'bypass' = 'miss',
  ): Promise<CachedAnswer | undefined> {
    ex.res.setHeader(CACHE_HEADER, said)
    spec.cache = said
    publish(rt, spec, said)
    const taking = new AnswerTaking(Math.floor(this.#options.maxBytes / 4))
    spec.capture = taking
    await runCall(rt, spec, client)
    const taken = taking.answer()
    if (!taken) return undefined
    const check = checkAnswer(spec, taken, this.#options.storeLengthStops)
    if (!check.keep) return undefined
    const answer: CachedAnswer = {
      kind: taken.kind,
      contentType: taken.contentType ?? (taken.kind === 'stream' ? clientFraming(spec.format).contentType : 'application/json'),
      body: taken.body,
      storedAt: Date.now(),
      usage: check.usage,
      owner: key.owner,
      model: key.model,
    }
    if (this.#store.setNow) {
      // Kept in this process at once: no promise for `flush` to wait on (most of what keeping an answer cost a miss).
      this.#store.setNow(key.id, answer, this.#options.ttlMs)
      publish(rt, spec, 'stored')
      return answer
    }
    // The client has its answer and calls waiting on this one get it now: the write is nobody's wait (`flush` ends it).
    const writing = this.#store.set(key.id, answer, this.#options.ttlMs).then(
      () => publish(rt, spec, 'stored'),
      (error: unknown) => {
        this.#logger.warn('model-gateway: an answer could not be cached', { requestId: spec.requestId, error: String(error) })
      },
    )
    this.#writing.add(writing)
    void writing.finally(() => this.#writing.delete(writing))
    return answer
  }

  /**
   * Serves a cached answer in the call's dialect and framing; false when it cannot be written so (the call then
   * goes upstream). A hit is admitted as any call (an owner over its limits gets its 429) and counts one request,
   * no tokens and no cost.
   */
  async #hit(rt: Runtime, spec: CallSpec, client: ClientSink, answer: CachedAnswer, atOnce = false): Promise<boolean> {
    let body: HitBody | undefined
    try {
      body = hitBody(spec, answer)
    } catch {
      body = undefined
    }
    if (!body) return false
    if (rt.ledger && metered(spec)) {
      const entry = await rt.ledger.admit(spec.owner)
      if (entry?.figures) spec.limitHeaders = spec.inbound.rateLimits.headers(entry.figures)
    }
    spec.cache = 'hit'
    if (channels.callStart.hasSubscribers) channels.callStart.publish(callStartMessage(rt.id, spec))
    const ageMs = Math.max(0, Date.now() - answer.storedAt)
    publish(rt, spec, 'hit', ageMs)
    const headers = withRequestId({ 'content-type': body.contentType } as Record<string, string | number>, spec.inbound, spec.requestId)
    // A translated hit names what its translation dropped or clamped, as the call that filled the cache did.
    reportDropped(rt.options.logger, spec.requestId, spec.bodies.translationFor(spec.model), headers)
    headers[CACHE_HEADER] = 'hit'
    headers.age = Math.floor(ageMs / 1000)
    if (spec.limitHeaders) Object.assign(headers, spec.limitHeaders)
    // A hit made at once (held in this process) is written with the turn's other hits: written as each request was
    // read, each woke its reader anew, which cost more than the hit itself at c=32 on loopback (see `turnEnd`). A hit
    // read from a store already comes with the others its reply answered.
    if (atOnce) await turnEnd()
    if (body.stream) {
      headers['cache-control'] = 'no-cache'
      client.open({ status: 200, headers })
      client.write(body.body)
      client.end()
    } else {
      headers['content-length'] = body.body.length
      client.complete({ status: 200, headers }, body.body)
    }
    // Only `call:end` waits for the answer's delivery; without a subscriber the hit is done once written.
    if (channels.callEnd.hasSubscribers) {
      const delivery = await client.watch.settled()
      const served = { model: spec.model, keyAlias: undefined }
      const outcome = { status: 200, delivered: delivery.delivered, recovered: false, usage: answer.usage ?? NO_USAGE, cost: 0, served }
      const message = endMessage(rt, spec, outcome)
      message.durationMs = performance.now() - spec.startedAt
      channels.callEnd.publish(message)
    }
    return true
  }
}

function publish(rt: Runtime, spec: CallSpec, result: CacheMessage['result'], ageMs?: number): void {
  if (!channels.cache.hasSubscribers) return
  const message: CacheMessage = {
    gatewayId: rt.id,
    requestId: spec.requestId,
    owner: spec.owner,
    operation: spec.operation,
    model: spec.model.id,
    result,
  }
  if (ageMs !== undefined) message.ageMs = ageMs
  channels.cache.publish(message)
}
