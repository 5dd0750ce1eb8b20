// How `upgradeHandler` (an adapter) reaches the sockets of the gateway it is given, which the public `Gateway`
// does not show: a gateway registers them here when it is created.
import type { Gateway } from '../types.js'
import type { SocketSessions } from './upgrade.js'

const sessionsOf = new WeakMap<Gateway, SocketSessions>()

/** Registers the sockets of `gateway`. */
export function registerSessions(gateway: Gateway, sessions: SocketSessions): void {
  sessionsOf.set(gateway, sessions)
}

/** The sockets of `gateway`; undefined for an object `createGateway` did not make. */
export function sessionsFor(gateway: Gateway): SocketSessions | undefined {
  return sessionsOf.get(gateway)
}
