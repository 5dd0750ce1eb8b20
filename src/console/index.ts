// The console, put together: its running calls, per-day usage and background list (each fed only while the console
// is on) and its server. The gateway creates it only when `console` is set; otherwise nothing of it exists.
import type { Runtime } from '../runtime.js'
import type { ConsoleParts } from './api.js'
import { BackgroundList } from './background-list.js'
import { createDailyUsage } from './daily-usage.js'
import type { ConsoleHooks } from './hooks.js'
import { LiveCalls } from './live-calls.js'
import type { ResolvedConsole } from './options.js'
import { type ConsoleServer, createConsoleServer } from './server.js'

/** The console of one gateway. */
export interface GatewayConsole extends ConsoleServer {
  /** Whether a gateway path is the console's. */
  claims(path: string): boolean
  /** What the runtime hands the call pipeline (`rt.console`). */
  readonly hooks: ConsoleHooks
}

/** How often a failing usage store is reported: one warn line per interval. */
const WARN_INTERVAL_MS = 10_000

/**
 * Creates the console. The runtime holds the console's hooks, so the console is made before it and reads it through
 * `runtime` once the first request or call comes; its running calls listen from the start.
 */
export function createConsole(options: ResolvedConsole, gatewayId: string, runtime: () => Runtime): GatewayConsole {
  const calls = new LiveCalls(gatewayId, (owner, requestId) => runtime().background.get(owner, requestId) !== undefined)
  let built: { parts: ConsoleParts; server: ConsoleServer } | undefined
  const build = () => {
    if (built) return built
    const rt = runtime()
    let warnedAt = Number.NEGATIVE_INFINITY
    const onError = (error: unknown) => {
      if (Date.now() - warnedAt < WARN_INTERVAL_MS) return
      warnedAt = Date.now()
      rt.options.logger.warn('model-gateway: the console could not keep per-day usage', { error: String(error) })
    }
    const parts: ConsoleParts = {
      rt,
      calls,
      usage: createDailyUsage(rt.options.store, options.usageDays, onError),
      background: new BackgroundList(rt),
      usageDays: options.usageDays,
      // `gateway.usage(owner)`: the ledger's windows, zeros without limits.
      windows: (owner) => (rt.ledger ? rt.ledger.usage(owner) : Promise.resolve({ requests: 0, tokens: 0, cost: 0 })),
    }
    built = { parts, server: createConsoleServer(options, rt.options.auth, parts, rt.options.logger) }
    return built
  }
  const base = options.path
  return {
    hooks: {
      watchCall: (requestId, res) => calls.watch(requestId, res),
      charged: (owner, tokens, cost) => build().parts.usage.add(owner, tokens, cost),
      noteBackground: (owner, requestId, id, model) => build().parts.background.note(owner, requestId, id, model),
    },
    claims: (path) => path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`),
    serve: (req, res, url) => build().server.serve(req, res, url),
    close() {
      built?.server.close()
      calls.close()
    },
  }
}
