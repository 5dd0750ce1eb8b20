import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { startEndlessUpstream } from '../support/endless-upstream.js'
import { ensureBuilt, type GatewayProcess, startGatewayProcess, stopAllGatewayProcesses } from '../support/gateway-process.js'
import { call, eventually } from '../support/http.js'
import { peakResidentGrowth } from '../support/peak-memory.js'
import { rawClient } from '../support/raw-client.js'

const MiB = 1024 * 1024
const KEY = 'sk-held-memory'
const CHAT = '/v1/chat/completions'
/** What one stream may hold with the default in-memory store: half of `recovery.maxBytesPerOwner`. */
const PER_STREAM = 64 * MiB
/** The peak RSS growth allowed per byte held: the design's 1.5x on Node 20, 2x on newer majors (see below). */
const PEAK_FACTOR = Number(process.versions.node.split('.')[0]) >= 22 ? 2 : 1.5
const UNKEEPABLE = 'model-gateway: a stream whose client left is too large to keep; it is stopped and not kept'

beforeAll(() => ensureBuilt(), 240_000)
afterAll(() => stopAllGatewayProcesses())

const unkeepable = (gw: GatewayProcess) => gw.events.filter((e) => e.message === UNKEEPABLE).length

it('holds abandoned keyed streams in at most 1.5 times their bytes, each stopped at its default bound', async () => {
  // Each stream pauses at 60 MiB until all three are there, so the three are held at once before any is stopped.
  const upstream = await startEndlessUpstream({ holdAt: 60 * MiB })
  const gw = await startGatewayProcess({ redisUrl: '', namespace: 'held-memory', upstreamUrl: upstream.url, apiKeys: [KEY] })
  try {
    // Warmed up first (code compiled, pools made): what is measured is what the streams hold.
    for (let n = 0; n < 3; n++) {
      const warm = await call(`${gw.url}${CHAT}`, {
        headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': `warm-${n}` },
        body: chatBody('finite warm-up', { stream: true }),
      })
      expect(warm.text).toContain('[DONE]')
    }
    const { growth } = await peakResidentGrowth(gw.child.pid as number, async () => {
      const clients = [1, 2, 3].map((n) =>
        rawClient(gw.url, CHAT, chatBody(`abandoned ${n}`, { stream: true }), KEY, { 'idempotency-key': `abandoned-${n}` }),
      )
      await Promise.all(clients.map((client) => client.requestId()))
      for (const client of clients) client.socket.resetAndDestroy()
      await eventually(() => upstream.written().filter((bytes) => bytes >= 60 * MiB).length === 3, 120_000)
      // What the sockets still buffer reaches the gateway before the streams go on past their bound.
      await sleep(500)
      upstream.release()
      await eventually(() => upstream.aborted() === 3 && unkeepable(gw) === 3, 120_000)
    })
    console.log('held-streams-memory: peak RSS growth MiB', (growth / MiB).toFixed(1), 'for 3 streams of', PER_STREAM / MiB, 'MiB')
    // Held at once: three logs of 64 MiB each. A joined retry's copy, a journal in the memory store and one buffer
    // per event made it 2 to 3 times that. Node 24's V8 lets more garbage stand before it collects (its young
    // generation grows larger): the same code peaks at 343-367 MiB there against under 288 on Node 20, so the bound
    // there is 2x, which the old copies (3x) still break.
    expect(growth).toBeLessThan(PEAK_FACTOR * 3 * PER_STREAM)
    expect(gw.events.some((e) => e.unhandled)).toBe(false)
  } finally {
    await gw.stop()
    await upstream.close()
  }
}, 300_000)
