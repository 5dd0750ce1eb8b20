// Times the exported requestBodyHash against the floor (JSON.parse + JSON.stringify + sha256) on
// the same 20 MB bodies, in interleaved rounds with a full GC before each timing, so neither side
// pays for the other's garbage. Run with --expose-gc; answers over IPC.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { manyObjectsBody, textHeavyBody } from './lib/bodies.mjs'

const entry = new URL('../dist/index.js', import.meta.url)
if (!existsSync(fileURLToPath(entry))) {
  process.send?.({ type: 'skip', reason: 'dist/index.js is not built' })
  process.exit(0)
}
const { requestBodyHash } = await import(entry.href)

const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {}

function time(fn) {
  gc()
  const start = process.hrtime.bigint()
  const out = fn()
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, out }
}

const floorFromText = (text) =>
  createHash('sha256')
    .update(JSON.stringify(JSON.parse(text)))
    .digest('hex')
const floorFromValue = (value) => createHash('sha256').update(JSON.stringify(value)).digest('hex')

/** @type {Record<string, string>} */
const bodies = {}

process.on('message', (message) => {
  const reply = (extra = {}) => process.send?.({ id: message.id, ...extra })
  if (message.type !== 'hash') return reply({ error: `unknown message ${message.type}` })
  const bytes = message.bytes
  const key = `${message.body}:${bytes}`
  bodies[key] ??= message.body === 'text' ? textHeavyBody(bytes) : manyObjectsBody(bytes)
  const text = bodies[key]
  const value = JSON.parse(text)
  const rounds = []
  // Warm-up: both paths once, so neither round one pays for compilation.
  requestBodyHash(text)
  floorFromText(text)
  for (let r = 0; r < message.rounds; r++) {
    // Alternate which side goes first: heap growth and CPU frequency drift fall on both.
    const order = r % 2 === 0 ? ['ours', 'floor'] : ['floor', 'ours']
    const round = {}
    for (const side of order) {
      if (side === 'ours') {
        round.oursText = time(() => requestBodyHash(text)).ms
        round.oursValue = time(() => requestBodyHash(value)).ms
      } else {
        round.floorText = time(() => floorFromText(text)).ms
        round.floorValue = time(() => floorFromValue(value)).ms
      }
    }
    rounds.push(round)
  }
  reply({ rounds, bytes: Buffer.byteLength(text) })
})

process.send?.({ type: 'ready' })
process.once('disconnect', () => process.exit(0))
