// What the late-reset tests (a whole answer's, a stream's) share: every `call:end` seen, and a record looked up by id.
import diagnosticsChannel from 'node:diagnostics_channel'
import { Client } from 'undici'
import { type CallEndMessage, gatewayChannels } from '../../src/observe/channels.js'
import { chatBody } from './bodies.js'
import { bearer, type Fixture, KEY_A } from './fixture.js'
import { call, eventually } from './http.js'

/** Every `call:end` seen, by request id: a short answer's call can end before its client reads the head. */
const ended = new Map<string, CallEndMessage>()
diagnosticsChannel.subscribe(gatewayChannels.callEnd, (message) => {
  ended.set((message as CallEndMessage).requestId, message as CallEndMessage)
})

/** Resolves with the `call:end` message of `requestId` once the gateway published it (a turn of the loop per look). */
export async function callEnd(requestId: string): Promise<CallEndMessage> {
  for (;;) {
    const message = ended.get(requestId)
    if (message) return message
    await new Promise(setImmediate)
  }
}

/** The record of `requestId` (KEY_A's) once it exists. */
export const recordOf = (fx: Fixture, requestId: string) =>
  eventually(async () => {
    const res = await call(`${fx.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })
    return res.status === 200 ? res.json : undefined
  }, 20_000)

/** Whether KEY_A's record of `requestId` exists now. */
export const hasRecord = async (fx: Fixture, requestId: string) =>
  (await call(`${fx.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })).status === 200

/** What `callsOnOneConnection` saw: each answer's status, text and request id, and the process's warnings meanwhile. */
export interface OneConnectionRun {
  statuses: number[]
  texts: string[]
  ids: string[]
  warnings: string[]
}

/**
 * Makes `count` chat calls (streamed or whole) one after another on one keep-alive connection, each answer read
 * whole before the next request, hearing the process's warnings meanwhile (a listener leak warns).
 */
export async function callsOnOneConnection(fx: Fixture, count: number, stream: boolean): Promise<OneConnectionRun> {
  const run: OneConnectionRun = { statuses: [], texts: [], ids: [], warnings: [] }
  const onWarning = (warning: Error) => run.warnings.push(warning.name)
  process.on('warning', onWarning)
  const client = new Client(new URL(fx.url).origin, { pipelining: 1 })
  try {
    for (let i = 0; i < count; i++) {
      const res = await client.request({
        path: `${new URL(fx.url).pathname.replace(/\/$/, '')}/v1/chat/completions`,
        method: 'POST',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody(`one connection ${i}`, stream ? { stream: true } : {})),
      })
      run.statuses.push(res.statusCode)
      run.texts.push(await res.body.text())
      run.ids.push(String(res.headers['x-request-id']))
    }
  } finally {
    await client.close()
    process.off('warning', onWarning)
  }
  return run
}
