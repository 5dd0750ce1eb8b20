// The bounds of the sockets one `upgradeHandler` accepts. Defaults here, stated again in the options reference
// (docs/reference/options.md) and checked against it.
import { GatewayError } from '../errors.js'

/** Options of `upgradeHandler`. */
export interface UpgradeHandlerOptions {
  /** Mount path the gateway lives under, e.g. `/ai`; upgrades outside it are left to other listeners. @default '' */
  prefix?: string
  /** How long one socket may live; then it closes with 1000 once its response (if any) has ended. @default 3600000 (60 min) */
  maxConnectionMs?: number
  /** How often an idle socket is pinged; one that has not answered the last ping by the next is cut. @default 30000 */
  pingIntervalMs?: number
  /**
   * Bytes of frames a client may leave untaken; past it the socket is cut (the response goes on and is kept).
   * @default 16777216 (16 MiB)
   */
  maxBufferedBytes?: number
  /** The largest frame a client may send (a `response.create` with its input). @default the gateway's `limits.maxRequestBytes` */
  maxFrameBytes?: number
  /** Sockets this handler holds open at once; an upgrade past it is answered 503. @default 10000 */
  maxConnections?: number
  /**
   * Bytes of input and output items a socket keeps for the continuation of its last response (every earlier turn's
   * items, carried); a response whose conversation is past it is not kept, and its continuation is answered
   * `previous_response_not_found` (send the whole input again). @default 16777216 (16 MiB)
   */
  maxConversationBytes?: number
}

/** The defaults of the numeric options of `upgradeHandler`. */
export const SOCKET_DEFAULTS = {
  maxConnectionMs: 60 * 60_000,
  pingIntervalMs: 30_000,
  maxBufferedBytes: 16 * 1024 * 1024,
  maxConnections: 10_000,
  maxConversationBytes: 16 * 1024 * 1024,
} as const

/** The options of one handler, resolved. */
export interface SocketBounds {
  prefix: string
  maxConnectionMs: number
  pingIntervalMs: number
  maxBufferedBytes: number
  maxFrameBytes: number | undefined
  maxConnections: number
  maxConversationBytes: number
}

const KNOWN = ['prefix', 'maxConnectionMs', 'pingIntervalMs', 'maxBufferedBytes', 'maxFrameBytes', 'maxConnections', 'maxConversationBytes']

function positive(value: unknown, fallback: number | undefined, name: string): number | undefined {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new GatewayError('invalid_options', `upgradeHandler: ${name} must be a positive integer, got ${String(value)}`)
  }
  return value
}

/** Checks and completes the options of `upgradeHandler`; throws GatewayError('invalid_options'). */
export function resolveSocketBounds(options: UpgradeHandlerOptions): SocketBounds {
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key))
      throw new GatewayError('invalid_options', `upgradeHandler: unknown option '${key}' (known: ${KNOWN.join(', ')})`)
  }
  if (options.prefix !== undefined && typeof options.prefix !== 'string') {
    throw new GatewayError('invalid_options', 'upgradeHandler: prefix must be a string')
  }
  const d = SOCKET_DEFAULTS
  return {
    prefix: (options.prefix ?? '').replace(/\/+$/, ''),
    maxConnectionMs: positive(options.maxConnectionMs, d.maxConnectionMs, 'maxConnectionMs') as number,
    pingIntervalMs: positive(options.pingIntervalMs, d.pingIntervalMs, 'pingIntervalMs') as number,
    maxBufferedBytes: positive(options.maxBufferedBytes, d.maxBufferedBytes, 'maxBufferedBytes') as number,
    maxFrameBytes: positive(options.maxFrameBytes, undefined, 'maxFrameBytes'),
    maxConnections: positive(options.maxConnections, d.maxConnections, 'maxConnections') as number,
    maxConversationBytes: positive(options.maxConversationBytes, d.maxConversationBytes, 'maxConversationBytes') as number,
  }
}
