#!/usr/bin/env node
// Side-by-side benchmarks of model-gateway against the floor and its peers, in one run on one machine.
//
//   node bench/run.mjs                       full run (about half an hour), writes bench/RESULTS.md
//   node bench/run.mjs --quick               one short round of the cheap parts, our contestants only
//   node bench/run.mjs --only latency,gw-node,floor-node
//   node bench/run.mjs --profile             also write CPU profiles of the contestants to bench/profiles/,
//                                            summarised by `node bench/profile-top.mjs bench/profiles/*.cpuprofile`
//
// The peers (http-proxy-middleware, @portkey-ai/gateway) and autocannon come from `npm install` in bench/;
// without them the run measures only our adapters and the floors, with an undici load generator.
//
// Tables go to stdout, progress to stderr. Traffic stays on 127.0.0.1 and every loop is bounded.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { freePort } from './lib/free-port.mjs'
import { loadGenerator } from './lib/load.mjs'
import { pin, planCores, startChild, startForeign } from './lib/proc.mjs'
import { verdictTable } from './lib/report.mjs'
import { verdictsOf } from './lib/verdicts.mjs'
import { backgroundPart } from './parts/background.mjs'
import { backgroundMemoryPart } from './parts/background-memory.mjs'
import { bedrockPart } from './parts/bedrock.mjs'
import { bedrockClientsPart } from './parts/bedrock-clients.mjs'
import { bedrockConversePart } from './parts/bedrock-converse.mjs'
import { hashPart, inflightMemoryPart, stallPart, storeMemoryPart } from './parts/big.mjs'
import { cachePart } from './parts/cache.mjs'
import { clientPart } from './parts/client.mjs'
import { hostilePart } from './parts/hostile.mjs'
import { latencyPart, ssePart, streamsHeldPart, throughputPart } from './parts/http.mjs'
import { instructionsPart } from './parts/instructions.mjs'
import { keepAlivePart } from './parts/keep-alive.mjs'
import { limitsPart } from './parts/limits.mjs'
import { otelPart } from './parts/otel.mjs'
import { redisPart } from './parts/redis.mjs'
import { repeatsPart } from './parts/repeats.mjs'
import { resiliencePart } from './parts/resilience.mjs'
import { streamsPart } from './parts/streams.mjs'
import { translatePart } from './parts/translate.mjs'
import { vertexPart } from './parts/vertex.mjs'
import { websocketPart } from './parts/websocket.mjs'

const BENCH = fileURLToPath(new URL('.', import.meta.url))
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const KEY = 'sk-bench'

const FULL = {
  rounds: 5,
  latencyWarmup: 300,
  latencyCount: 2000,
  throughputWarmupS: 1,
  throughputS: 2,
  connections: 32,
  sseFrameGapMs: 2,
  sseStreams: 12,
  sseRounds: 3,
  sseWarmup: 200,
  heldStreams: 1000,
  heldFrameGapMs: 40,
  bigBytes: 20 * 1024 * 1024,
  hashRounds: 5,
  stallRounds: 3,
  stallWindowMs: 2000,
  stallMaxSamples: 20_000,
  stallParallel: 2,
  hostileDeepBytes: 16 * 1024 * 1024,
  hostileWideBytes: 60 * 1024 * 1024,
  inflight: 10,
  inflightHoldMs: 2000,
  storeRecords: 1000,
  storeRecordBytes: 100 * 1024,
  listRepeats: 10,
  redisSequential: 200,
  redisBurst: 1000,
  redisRecordBytes: 10 * 1024,
  resumeCuts: 20,
  instructionsWarmup: 8000,
  instructionsCount: 4000,
  keepAliveStreams: 1000,
  keepAliveIntervalMs: 100,
  keepAliveQuietMs: 3000,
  keepAliveSettleMs: 500,
  keepAliveWindowMs: 2000,
  idleSockets: 1000,
  backgroundBytes: 10 * 1024 * 1024,
  backgroundRounds: 3,
}
const QUICK = {
  ...FULL,
  rounds: 1,
  latencyWarmup: 50,
  latencyCount: 200,
  throughputWarmupS: 1,
  throughputS: 1,
  sseStreams: 3,
  sseRounds: 1,
  sseWarmup: 30,
  heldStreams: 50,
  heldFrameGapMs: 5,
  bigBytes: 4 * 1024 * 1024,
  hashRounds: 1,
  stallRounds: 1,
  stallWindowMs: 500,
  hostileDeepBytes: 2 * 1024 * 1024,
  hostileWideBytes: 4 * 1024 * 1024,
  inflight: 3,
  inflightHoldMs: 500,
  storeRecords: 50,
  listRepeats: 2,
  redisSequential: 10,
  redisBurst: 20,
  resumeCuts: 3,
  instructionsWarmup: 300,
  instructionsCount: 200,
  keepAliveStreams: 100,
  idleSockets: 100,
  backgroundBytes: 2 * 1024 * 1024,
  backgroundRounds: 1,
}

const PARTS = [
  'latency',
  'throughput',
  'instructions',
  'sse',
  'held',
  'hash',
  'stall',
  'inflight',
  'store',
  'redis',
  'repeats',
  'resilience',
  'translate',
  'vertex',
  'otel',
  'streams',
  'keepalive',
  'client',
  'limits',
  'background',
  'cache',
  'websocket',
  'background-memory',
  'bedrock',
  'bedrock-converse',
  'bedrock-clients',
]
const QUICK_PARTS = ['latency', 'throughput', 'sse', 'hash']

/** Everyone measured. `peer`: needs `npm install` in bench/. */
const CONTESTANTS = [
  { id: 'direct', label: 'direct to the mock' },
  { id: 'floor-node', label: 'floor: node:http + undici' },
  { id: 'gw-node', label: 'model-gateway node' },
  { id: 'floor-express', label: 'bare Express + undici' },
  { id: 'floor-express-node', label: 'Express + the floor’s node:http handler' },
  { id: 'gw-express', label: 'model-gateway Express' },
  { id: 'floor-koa', label: 'bare Koa + undici' },
  { id: 'gw-koa', label: 'model-gateway Koa' },
  { id: 'hpm-express', label: 'http-proxy-middleware (Express)', peer: true },
  { id: 'portkey', label: '@portkey-ai/gateway', peer: true },
]

function parseArgs(argv) {
  const args = { quick: false, only: [], profile: false, write: undefined }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--quick') args.quick = true
    else if (arg === '--profile') args.profile = true
    else if (arg === '--no-write') args.write = false
    else if (arg === '--write') args.write = true
    else if (arg === '--only') args.only.push(...String(argv[++i] ?? '').split(','))
    else if (arg.startsWith('--only=')) args.only.push(...arg.slice(7).split(','))
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: node bench/run.mjs [--quick] [--only part,contestant,...] [--profile] [--write|--no-write]')
      console.log(`parts: ${PARTS.join(', ')}\ncontestants: ${CONTESTANTS.map((c) => c.id).join(', ')}`)
      process.exit(0)
    } else throw new Error(`unknown argument ${arg}`)
  }
  args.only = args.only.map((s) => s.trim()).filter(Boolean)
  for (const token of args.only) {
    if (!PARTS.includes(token) && !CONTESTANTS.some((c) => c.id === token)) throw new Error(`--only: unknown part or contestant '${token}'`)
  }
  return args
}

const log = (line) => process.stderr.write(`· ${line}\n`)

function versionOf(name) {
  for (const base of [`${BENCH}node_modules`, `${ROOT}node_modules`]) {
    try {
      return JSON.parse(readFileSync(`${base}/${name}/package.json`, 'utf8')).version
    } catch {}
  }
  return undefined
}

/** The newest modification time of the files under `dir`, in ms. @param {string} dir */
function newestUnder(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs)
  }
  return newest
}

function ensureBuilt() {
  // dist/testing.js is the mock upstream (model-gateway/testing) that bench/mock.mjs runs.
  const built = [`${ROOT}dist/index.js`, `${ROOT}dist/node.js`, `${ROOT}dist/testing.js`]
  // A build older than the source would measure code that is no longer there (and miss routes it now has).
  if (built.every(existsSync) && Math.min(...built.map((f) => statSync(f).mtimeMs)) >= newestUnder(`${ROOT}src`)) return
  log('dist/ is missing or older than src/: npm run build')
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
  if (result.status !== 0) throw new Error('npm run build failed')
}

function targetFor(id, port, mockUrl) {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }
  if (id === 'portkey') Object.assign(headers, { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mockUrl}/v1` })
  return { origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers }
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const cfg = args.quick ? QUICK : FULL
  const partTokens = args.only.filter((t) => PARTS.includes(t))
  const contestantTokens = args.only.filter((t) => !PARTS.includes(t))
  const parts = partTokens.length ? partTokens : args.quick ? QUICK_PARTS : PARTS
  const write = args.write ?? (!args.quick && args.only.length === 0)
  ensureBuilt()

  const plan = planCores()
  if (plan.pinned) pin(process.pid, plan.load)
  const peersInstalled = existsSync(`${BENCH}node_modules/@portkey-ai/gateway`) && existsSync(`${BENCH}node_modules/http-proxy-middleware`)
  const notes = []
  let wanted = CONTESTANTS.filter((c) => (contestantTokens.length ? contestantTokens.includes(c.id) : !(args.quick && c.peer)))
  if (!wanted.some((c) => c.id === 'direct')) wanted.unshift(CONTESTANTS[0])
  if (!peersInstalled && wanted.some((c) => c.peer)) {
    notes.push('Peers skipped: bench/node_modules is missing (run `npm install` in bench/).')
    wanted = wanted.filter((c) => !c.peer)
  }

  const machine = {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: plan.cores,
    node: process.version,
    pinning: plan.pinned ? `servers on core ${plan.server}; mock and load generator on core ${plan.load}` : plan.note,
    load: os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' '),
  }
  const versions = [
    'undici',
    'express',
    'koa',
    'autocannon',
    'http-proxy-middleware',
    '@portkey-ai/gateway',
    '@hono/node-server',
    '@redis/client',
  ]
    .map((name) => [name, versionOf(name)])
    .filter(([, v]) => v)
    .map(([name, v]) => `${name} ${v}`)
    .join(', ')
  const header = [
    `Date: ${machine.date}`,
    `Machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, load average at start ${machine.load}`,
    `Pinning: ${machine.pinning}`,
    `Mode: ${args.quick ? 'quick (one short round)' : 'full'}; parts: ${parts.join(', ')}; load generator: ${loadGenerator}`,
    `Versions: ${versions}`,
  ]
  console.log(`## model-gateway benchmarks\n\n${header.map((line) => `- ${line}`).join('\n')}\n`)

  const mock = await startChild(`${BENCH}mock.mjs`, [], { cpus: plan.load })
  const mockUrl = mock.ready.url
  const serverEnv = { UPSTREAM: mockUrl, BENCH_KEY: KEY }
  const execArgv = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${BENCH}profiles`] : []
  if (args.profile) mkdirSync(`${BENCH}profiles`, { recursive: true })

  const needsServers = parts.some((p) => ['latency', 'throughput', 'sse', 'held', 'stall'].includes(p))
  const contestants = []
  const running = []
  if (needsServers) {
    for (const c of wanted) {
      if (c.id === 'direct') {
        contestants.push({ ...c, target: targetFor(c.id, mock.ready.port, mockUrl), pid: undefined })
        continue
      }
      if (c.id === 'portkey') {
        // Its own server entry, headless, pointed per request at the mock as a custom OpenAI host. bench/package.json
        // overrides @hono/node-server to 1.13.5: later versions hand Portkey the upstream Response's immutable
        // headers, and every streamed answer fails with `TypeError: immutable` on Node 20.
        const port = await freePort()
        const script = `${BENCH}node_modules/@portkey-ai/gateway/build/start-server.js`
        const server = await startForeign(process.execPath, [...execArgv, script, `--port=${port}`, '--headless'], {
          cwd: BENCH,
          port,
          cpus: plan.server,
        })
        running.push(server)
        contestants.push({ ...c, target: targetFor(c.id, port, mockUrl), pid: server.child.pid })
        continue
      }
      const server = await startChild(`${BENCH}server.mjs`, [c.id], { cpus: plan.server, env: serverEnv, execArgv })
      if (server.ready.type !== 'ready') {
        notes.push(`${c.label} skipped: ${server.ready.reason}.`)
        continue
      }
      running.push(server)
      contestants.push({ ...c, target: targetFor(c.id, server.ready.port, mockUrl), pid: server.child.pid })
    }
    log(`contestants: ${contestants.map((c) => c.id).join(', ')}`)
  }
  for (const note of notes) console.log(`> ${note}\n`)

  const ctx = {
    wanted: wanted.map((c) => c.id),
    labels: Object.fromEntries(CONTESTANTS.map((c) => [c.id, c.label])),
    cfg,
    plan,
    log,
    mock,
    serverEnv,
    execArgv,
    contestants,
    loadPids: [process.pid, mock.child.pid],
    targetFor: (id, port) => targetFor(id, port, mockUrl),
  }
  const results = {}
  const sections = []
  const run = async (name, fn) => {
    if (!parts.includes(name)) return
    log(`part: ${name}`)
    try {
      results[name] = await fn(ctx)
      sections.push(results[name].text)
      console.log(results[name].text)
    } catch (error) {
      const text = `### ${name}\n\nFailed: ${String(error?.stack ?? error)
        .split('\n')
        .slice(0, 3)
        .join(' ')}\n`
      sections.push(text)
      console.log(text)
    }
  }
  await run('latency', latencyPart)
  await run('throughput', throughputPart)
  await run('instructions', instructionsPart)
  await run('sse', ssePart)
  await run('held', streamsHeldPart)
  for (const server of running) await server.stop()
  await run('hash', hashPart)
  await run('stall', async (c) => {
    // Fresh servers: the earlier parts leave heaps grown by other traffic.
    const fresh = []
    for (const id of ['floor-node', 'gw-node']) {
      const server = await startChild(`${BENCH}server.mjs`, [id], { cpus: plan.server, env: serverEnv, execArgv })
      if (server.ready.type !== 'ready') continue
      running.push(server)
      fresh.push({
        ...CONTESTANTS.find((x) => x.id === id),
        target: targetFor(id, server.ready.port, mockUrl),
        pid: server.child.pid,
        server,
      })
    }
    let stall
    try {
      stall = await stallPart({ ...c, contestants: fresh })
    } finally {
      for (const server of running) await server.stop()
    }
    const hostile = await hostilePart(c)
    return { ...stall, hostile, text: `${stall.text}\n${hostile.text}` }
  })
  await run('inflight', inflightMemoryPart)
  await run('store', storeMemoryPart)
  await run('redis', redisPart)
  await run('repeats', repeatsPart)
  await run('resilience', resiliencePart)
  await run('translate', translatePart)
  await run('vertex', vertexPart)
  await run('otel', otelPart)
  await run('streams', streamsPart)
  await run('keepalive', keepAlivePart)
  await run('client', clientPart)
  await run('limits', limitsPart)
  await run('background', backgroundPart)
  await run('cache', cachePart)
  await run('websocket', websocketPart)
  await run('background-memory', backgroundMemoryPart)
  await run('bedrock', bedrockPart)
  await run('bedrock-converse', bedrockConversePart)
  await run('bedrock-clients', bedrockClientsPart)
  await mock.stop()

  const verdicts = verdictsOf(results)
  const verdictText = `### Targets\n\n${verdictTable(verdicts)}\n`
  console.log(verdictText)
  if (write) {
    const doc = [
      '# Benchmark results',
      '',
      'Written by `npm run bench` (`node bench/run.mjs`); every figure below was printed by that run. Ratios, not absolute',
      'numbers, are what carries over to another machine.',
      '',
      ...header.map((line) => `- ${line}`),
      '',
      ...notes.map((note) => `> ${note}\n`),
      ...sections,
      verdictText,
    ].join('\n')
    writeFileSync(`${BENCH}RESULTS.md`, doc)
    log('wrote bench/RESULTS.md')
  }
  log('done')
}

main().then(
  // Keep-alive sockets of the clients would hold the loop open for their idle timeout.
  () => process.exit(0),
  (error) => {
    console.error(error?.stack ?? error)
    process.exit(1)
  },
)
