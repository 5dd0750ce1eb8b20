// The console, put together: its running calls, per-day usage and background list (each fed only while the console
// is on) and its server. The gateway creates it only when `console` is set; otherwise nothing of it exists.
import type { Runtime } from '../runtime.js'
import { BackgroundList } from './background-list.js'
import { createDailyUsage } from './daily-usage.js'
import type { ConsoleHooks } from './hooks.js'
import { LiveCalls } from './live-calls.js'
import type { ResolvedConsole } from './options.js'
import { type ConsoleServer, createConsoleServer } from './server.js'

/** The console of one gateway. */
export interface GatewayConsole extends ConsoleServer {
  readonly hooks: ConsoleHooks
}

/** How often a failing usage store is reported: one warn line per interval. */
const WARN_INTERVAL_MS = 10_000

/** Creates the console; `runtime` is read once requests come (the runtime holds the console's hooks). */
export function createConsole(options: ResolvedConsole, gatewayId: string, runtime: () => Runtime): GatewayConsole {
  const rt = () => runtime()
  const calls = new LiveCalls(gatewayId, (owner, requestId) => rt().background.get(owner, requestId) !== undefined)
  let warnedAt = Number.NEGATIVE_INFINITY
  const onError = (error: unknown) => {
    if (Date.now() - warnedAt < WARN_INTERVAL_MS) return
    warnedAt = Date.now()
    rt().options.logger.warn('model-gateway: the console could not keep per-day usage', { error: String(error) })
  }
  let usage: ReturnType<typeof createDailyUsage> | undefined
  const daily = () => {
    usage ??= createDailyUsage(rt().options.store, options.usageDays, onError)
    return usage
  }
  let background: BackgroundList | undefined
  const list = () => {
    background ??= new BackgroundList(rt())
    return background
  }
  let server: ConsoleServer | undefined
  const serverOf = () => {
    const r = rt()
    server ??= createConsoleServer(
      options,
      r.options.auth,
      {
        rt: r,
        calls,
        get usage() {
          return daily()
        },
        get background() {
          return list()
        },
        usageDays: options.usageDays,
        windows: (owner) => (r.ledger ? r.ledger.usage(owner) : Promise.resolve({ requests: 0, tokens: 0, cost: 0 })),
      },
      r.options.logger,
    )
    return server
  }
  const base = options.path
  return {
    hooks: {
      watchCall: (requestId, res) => calls.watch(requestId, res),
      charged: (owner, tokens, cost) => daily().add(owner, tokens, cost),
      noteBackground: (owner, requestId, id, model) => list().note(owner, requestId, id, model),
    },
    claims: (path) => path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`),
    serve: (req, res, url) => serverOf().serve(req, res, url),
    close() {
      server?.close()
      calls.close()
    },
  }
}
