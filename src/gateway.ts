import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { BackgroundCalls } from './background/calls.js'
import { ByteBudget } from './byte-budget.js'
import { ResponseCache } from './cache/cache.js'
import { resolveOptions } from './config/resolve.js'
import { createConsole } from './console/index.js'
import { GatewayError } from './errors.js'
import { serveBackground } from './handlers/background.js'
import { gatewayStatus, healthHandler } from './handlers/health.js'
import { serveModelCall } from './handlers/model-call.js'
import { modelsHandler } from './handlers/models.js'
import { recoveriesHandler } from './handlers/recoveries.js'
import { BodyBudget } from './http/body-budget.js'
import { createCors } from './http/cors.js'
import { DeadlineSweeper } from './http/deadlines.js'
import { createDispatch } from './http/dispatch.js'
import { KeepAliveSweeper } from './http/keep-alive.js'
import { type Match, matchRequest } from './http/router.js'
import { JoinableCalls } from './idempotency/joinable-calls.js'
import { RecentAnswers } from './idempotency/recent-answers.js'
import { Ledger } from './ledger/ledger.js'
import { unofferedPrices } from './ledger/pricing.js'
import { TokenCountCheck } from './ledger/tokens.js'
import { channels, type RecordsTrimMessage } from './observe/channels.js'
import { subscribeUsage } from './observe/usage.js'
import { PendingWrites } from './recovery/pending.js'
import { FollowableCalls } from './recovery/stream/followable-calls.js'
import type { Runtime } from './runtime.js'
import { createGatewayStore } from './store/gateway-store.js'
import type { Gateway, GatewayLogger, GatewayOptions, HandleOptions } from './types.js'
import { createUpstreamAgent } from './upstream/agent.js'
import { attemptEvents } from './upstream/interceptors/attempt-events.js'
import { attemptLog } from './upstream/interceptors/attempt-log.js'
import { circuitBreaker } from './upstream/interceptors/circuit.js'
import { outermostFirst } from './upstream/interceptors/compose.js'
import { fallbacks } from './upstream/interceptors/fallback.js'
import { keyPool } from './upstream/interceptors/key-pool.js'
import { KeyRedaction } from './upstream/redact.js'
import { createSend } from './upstream/send.js'
import { registerSessions } from './websocket/hook.js'
import { SocketSessions } from './websocket/upgrade.js'

const STORE_ERROR_LOG_INTERVAL_MS = 10_000
/** How long `close()` waits for in-flight work before aborting it. */
const DEFAULT_CLOSE_TIMEOUT_MS = 30_000
/** How long `close()` then gives aborted handlers to return before it closes the store regardless. */
const ABORT_GRACE_MS = 1_000

/** Whether `promise` settled within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([promise.then(() => true as const), timedOut])
  } finally {
    clearTimeout(timer)
  }
}

/** A store that reconnects reports an error per attempt: log the first, then one line per interval with a count. */
function storeErrorReporter(logger: GatewayLogger): (error: unknown) => void {
  let lastLogged = Number.NEGATIVE_INFINITY
  let suppressed = 0
  return (error) => {
    const now = Date.now()
    if (now - lastLogged < STORE_ERROR_LOG_INTERVAL_MS) {
      suppressed++
      return
    }
    logger.warn('model-gateway: store error', { error: String(error), ...(suppressed > 0 ? { suppressed } : {}) })
    lastLogged = now
    suppressed = 0
  }
}

/** `ready()`'s rejection: store_unavailable, saying why in its message (a Redis client's cause is only in `cause`). */
function notReady(error: unknown): GatewayError {
  const reason = error instanceof Error ? error.message : String(error)
  const cause = error instanceof Error && error.cause instanceof Error ? ` ${error.cause.message}` : ''
  return new GatewayError('store_unavailable', `The store cannot be reached: ${reason}${cause}`, { cause: error })
}

/** How many request ids one eviction log line names (oldest first); its `count` says how many went. */
const EVICTED_IDS_LOGGED = 20

/**
 * Creates a gateway; throws GatewayError('invalid_options') on bad options.
 *
 * @example
 * const gateway = createGateway({
 *   upstreams: { openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY } },
 *   models: [{ id: 'gpt-4o-mini', upstream: 'openai' }],
 *   auth: { apiKeys: ['sk-my-client-key'] },
 * })
 * http.createServer(nodeHandler(gateway)).listen(8080)
 */
export function createGateway(options: GatewayOptions): Gateway {
  const resolved = resolveOptions(options)
  const unoffered = unofferedPrices(resolved.unofferedPrices, resolved.models.keys())
  if (unoffered) resolved.logger.warn('model-gateway: pricing names models this gateway does not offer; their prices are unused', unoffered)
  for (const upstream of resolved.upstreams.values()) {
    // Accepted (a few compatible APIs serve at the root), but every call would likely get the upstream's 404.
    if (upstream.baseUrlHint) {
      resolved.logger.warn("model-gateway: an upstream's baseUrl has no API path; calls to it may all get its 404", {
        upstream: upstream.name,
        origin: upstream.origin,
        hint: upstream.baseUrlHint,
      })
    }
  }
  const id = randomUUID()
  const { dispatcher, owned: agent } = createUpstreamAgent(resolved.timeouts, resolved.egress)
  const circuits = circuitBreaker(id)
  const consolePage = resolved.console && createConsole(resolved.console, id, () => rt)
  const rt: Runtime = {
    id,
    options: resolved,
    // Fallbacks try other models, each behind its upstream's circuit; the pool tries other keys of one upstream; each
    // real attempt is logged and published.
    send: outermostFirst(
      [fallbacks(resolved.logger), circuits.interceptor, keyPool(), attemptLog(resolved.logger), attemptEvents(id)],
      createSend(dispatcher, new ByteBudget(resolved.limits.maxDecodingBytes)),
    ),
    store: createGatewayStore({
      keyv: resolved.store,
      maxMemoryBytes: resolved.recovery.maxMemoryBytes,
      ownerLimits: { maxRecords: resolved.recovery.maxRecordsPerOwner, maxBytes: resolved.recovery.maxBytesPerOwner },
      // One line per eviction report (a trim may take hundreds): the count, and the first ids to look for.
      onEvict: ({ requestIds, reason }) =>
        resolved.logger.warn('model-gateway: recovery records evicted before their time', {
          reason,
          count: requestIds.length,
          requestIds: requestIds.slice(0, EVICTED_IDS_LOGGED),
        }),
      onTrim: (trim) => {
        if (channels.recordsTrim.hasSubscribers) channels.recordsTrim.publish({ gatewayId: id, ...trim } satisfies RecordsTrimMessage)
      },
      onError: storeErrorReporter(resolved.logger),
    }),
    pendingWrites: new PendingWrites(
      () => rt.store,
      { maxRecords: resolved.recovery.maxPendingRecords, maxBytes: resolved.recovery.maxPendingBytes },
      resolved.logger,
    ),
    bodyLimits: {
      maxBytes: resolved.limits.maxRequestBytes,
      maxDepth: resolved.limits.maxJsonDepth,
      deadline: new DeadlineSweeper(resolved.timeouts.requestBodyMs),
    },
    clientDeadlines: {
      write: new DeadlineSweeper(resolved.timeouts.clientWriteMs),
      lateReset: new DeadlineSweeper(resolved.timeouts.lateResetMs),
    },
    heldStreams: new ByteBudget(resolved.recovery.maxHeldStreamBytes),
    bodyBudget: new BodyBudget({
      total: resolved.limits.maxInFlightRequestBytes,
      perOwner: resolved.limits.maxInFlightRequestBytesPerOwner,
    }),
    redaction: new KeyRedaction([...resolved.upstreams.values()].flatMap((upstream) => upstream.secrets)),
    circuits: () => circuits.states(resolved.upstreams.values()),
    followable: new FollowableCalls(),
    keepAlive: resolved.keepAlive.streamMs > 0 ? new KeepAliveSweeper(resolved.keepAlive.streamMs) : undefined,
    background: new BackgroundCalls(),
    repeats: {
      joinable: new JoinableCalls(),
      recent: new RecentAnswers({ ttlMs: resolved.idempotency.recentMs, maxBytes: resolved.idempotency.recentMaxBytes }),
    },
    ledger: resolved.ownerLimits && new Ledger({ ...resolved.ownerLimits, store: resolved.store, logger: resolved.logger }),
    prices: resolved.pricing,
    tokenCheck: new TokenCountCheck(resolved.logger),
    console: consolePage?.hooks,
  }
  const cache = resolved.cache && new ResponseCache(resolved.cache, resolved.store, resolved.logger)
  const cors = resolved.cors ? createCors(resolved.cors) : undefined
  const unsubscribeUsage = resolved.onUsage ? subscribeUsage(id, resolved.onUsage, resolved.logger) : undefined
  // A count of the requests being served, not a set of promises: close() only needs to know when it reaches zero.
  let serving = 0
  let drained: (() => void) | undefined
  let closing: Promise<void> | undefined
  const isClosing = () => closing !== undefined
  const status = () => gatewayStatus(rt, isClosing)
  const dispatch = createDispatch(
    rt,
    {
      ...modelsHandler(rt),
      health: healthHandler(status),
      call: (ex, route) => serveModelCall(rt, ex, route, cache?.serveCall),
      recoveries: recoveriesHandler(rt),
      background: (ex, route) => serveBackground(rt, ex, route),
    },
    isClosing,
  )

  // `dispatch` never rejects and runs this at its end, in the reaction that ends it: no turn of its own per request.
  const finished = (): true => {
    if (--serving === 0) drained?.()
    return true
  }
  // Sockets of the WebSocket modes, accepted by `upgradeHandler`: no timer or socket until the first upgrade.
  const sockets = new SocketSessions(rt)
  function serve(req: IncomingMessage, res: ServerResponse, init: HandleOptions, match: Match): Promise<true> {
    serving++
    return dispatch(req, res, match, init, performance.now(), finished)
  }

  const gateway: Gateway = {
    id,
    status,
    cache: { delete: (filter) => (cache ? cache.delete(filter) : Promise.resolve(0)) },
    ready() {
      return rt.store.ready().catch((error: unknown) => {
        throw notReady(error)
      })
    },
    usage(owner) {
      if (typeof owner !== 'string' || owner === '') {
        return Promise.reject(new GatewayError('invalid_request', 'usage(owner) takes the owner id usage events carry'))
      }
      return rt.ledger ? rt.ledger.usage(owner) : Promise.resolve({ requests: 0, tokens: 0, cost: 0 })
    },
    handle(req, res, init = {}) {
      const url = init.path ?? req.url ?? '/'
      if (consolePage?.claims(url)) return consolePage.serve(req, res, url).then(() => true)
      const match = matchRequest(req.method ?? 'GET', url, init.claimUnknown ?? false, req.headers)
      if (!match) return Promise.resolve(false)
      // A preflight is answered here, before auth: browsers send it without the key.
      if (cors?.(req, res, match)) return Promise.resolve(true)
      return serve(req, res, init, match)
    },
    close(options = {}) {
      const timeoutMs = options.timeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS
      if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) {
        return Promise.reject(
          new GatewayError('invalid_options', `close({ timeoutMs }) takes a number of ms >= 0, got ${String(timeoutMs)}`),
        )
      }
      closing ??= (async () => {
        let aborted = false
        // Idle sockets close now, answering ones once their response ended (a background call, waited for below).
        const socketsClosed = sockets.close()
        // Background calls are given the same time to end as requests in flight; past it they end as failed.
        const runsEnded = rt.background.settled()
        if (serving > 0 || rt.background.size > 0) {
          const allDrained = serving > 0 ? new Promise<void>((resolve) => (drained = resolve)) : Promise.resolve()
          if (!(await within(Promise.all([allDrained, runsEnded]), timeoutMs))) {
            resolved.logger.warn('model-gateway: close() timed out; aborting the upstream calls still running', {
              inFlight: serving,
              timeoutMs,
            })
            // Destroying the pool aborts every upstream call: streams end, whole calls fail, handlers return. An
            // operator's own dispatcher is theirs to close: its calls are left to the grace below.
            aborted = true
            // Stopped with a reason, and their last state written before the store closes.
            const runsStopped = rt.background.stopAll('The gateway shut down before this response ended.')
            await agent?.destroy()
            await within(Promise.all([allDrained, runsStopped]), ABORT_GRACE_MS)
          }
        }
        if (!(await within(socketsClosed, aborted ? ABORT_GRACE_MS : timeoutMs))) sockets.terminate()
        await within(socketsClosed, ABORT_GRACE_MS)
        unsubscribeUsage?.()
        consolePage?.close()
        // Charges still on their way land before the store closes.
        await rt.ledger?.settled()
        rt.repeats.recent.clear()
        // Records held while the store was down are written now if it takes them, else logged as lost.
        await rt.pendingWrites.close()
        // Answers served but not yet cached are written while the store is still open.
        await cache?.flush()
        await rt.store.close()
        if (!aborted) await agent?.close()
      })()
      return closing
    },
  }
  registerSessions(gateway, sockets)
  return gateway
}
export type { Gateway, HandleOptions } from './types.js'
