import type { ServerResponse } from 'node:http'
import { sendJson } from '../http/reply.js'
import type { Runtime } from '../runtime.js'
import type { GatewayStatus } from '../types.js'

/** The gateway's health: its store's cheap check (bounded to a second), and whether it is closing. */
export async function gatewayStatus(rt: Runtime, isClosing: () => boolean): Promise<GatewayStatus> {
  const store = (await rt.store.healthy()) ? 'ok' : 'unavailable'
  return { status: store === 'ok' && !isClosing() ? 'ok' : 'degraded', store, upstreams: rt.circuits() }
}

/** `GET /v1/health`, no key needed: 200 when ok, 503 when degraded, never cached. */
export function healthHandler(status: () => Promise<GatewayStatus>): (res: ServerResponse) => Promise<void> {
  return async (res) => {
    const { status: state, store } = await status()
    sendJson(res, state === 'ok' ? 200 : 503, { status: state, store }, { 'cache-control': 'no-store' })
  }
}
