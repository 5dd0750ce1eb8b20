// What the console costs a model call: CPU µs per call in the gateway's process (the load generator's share is the
// same in every row, so differences are the gateway's), with the console off (the default), on with nobody watching,
// and on with a page watching the running calls live. The mock upstream runs in a child process. Rounds alternate
// off/on/watched so the machine's drift spreads over all three; prints one JSON line per row (medians of the rounds).
//
//   node bench/console.mjs [calls per round, default 4000] [rounds, default 5]
import { fork } from 'node:child_process'
import http from 'node:http'
import { Pool } from 'undici'
import { createGateway } from '../dist/index.js'
import { nodeHandler } from '../dist/node.js'

const CALLS = Number(process.argv[2] ?? 4000)
const ROUNDS = Number(process.argv[3] ?? 5)
const CONCURRENCY = 8
const KEY = 'sk-bench'

const child = fork(new URL('./mock.mjs', import.meta.url), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
const mockUrl = await new Promise((resolve) => child.on('message', (m) => m?.url && resolve(m.url)))

async function gatewayOf(consoleOn) {
  const gateway = createGateway({
    upstreams: { mock: { type: 'openai', baseUrl: `${mockUrl}/v1`, apiKey: 'sk-upstream' } },
    models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
    auth: { apiKeys: [KEY] },
    pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
    ...(consoleOn ? { console: { adminKeys: ['bench-admin-key'] } } : {}),
  })
  const server = http.createServer(nodeHandler(gateway))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${server.address().port}`
  return { gateway, server, url }
}

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }

async function round(url, watch) {
  const pool = new Pool(url, { connections: CONCURRENCY })
  let stop
  if (watch) {
    const res = await fetch(`${url}/console/api/calls/stream`, { headers: { authorization: `Bearer ${KEY}` } })
    const reader = res.body.getReader()
    let open = true
    ;(async () => {
      while (open && !(await reader.read()).done);
    })()
    stop = () => {
      open = false
      reader.cancel().catch(() => {})
    }
  }
  let left = CALLS
  const started = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body })
        await res.body.dump()
        if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`)
      }
    }),
  )
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(started)
  stop?.()
  await pool.close()
  return { usPerCall: (cpu.user + cpu.system) / CALLS, reqPerSec: (CALLS / ms) * 1000 }
}

const rows = { off: [], on: [], watched: [] }
const gateways = { off: await gatewayOf(false), on: await gatewayOf(true) }
for (const { url } of Object.values(gateways)) await round(url, false) // warm-up
for (let r = 0; r < ROUNDS; r++) {
  rows.off.push(await round(gateways.off.url, false))
  rows.on.push(await round(gateways.on.url, false))
  rows.watched.push(await round(gateways.on.url, true))
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
for (const [name, samples] of Object.entries(rows)) {
  const row = { console: name, calls: CALLS, rounds: ROUNDS, concurrency: CONCURRENCY }
  row.cpuUsPerCall = Number(median(samples.map((s) => s.usPerCall)).toFixed(1))
  row.reqPerSec = Math.round(median(samples.map((s) => s.reqPerSec)))
  console.log(JSON.stringify(row))
}
for (const { gateway, server } of Object.values(gateways)) {
  server.closeAllConnections()
  server.close()
  await gateway.close()
}
child.kill()
