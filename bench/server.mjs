// One contestant server per process: `node bench/server.mjs <kind>`, upstream origin in UPSTREAM.
// Reports `{ type: 'ready', port }` over IPC, or `{ type: 'skip', reason }` when its entry point is
// not built yet. Answers memory and record-write questions over IPC so that nothing bench-specific
// sits in front of the request handler.
import { existsSync } from 'node:fs'
import http from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createFloor } from './lib/floor.mjs'

const kind = process.argv[2]
const upstream = /** @type {string} */ (process.env.UPSTREAM)
const dist = new URL('../dist/', import.meta.url)
const KEY = process.env.BENCH_KEY ?? 'sk-bench'

async function distModule(name) {
  const file = new URL(`${name}.js`, dist)
  if (!existsSync(fileURLToPath(file))) return undefined
  return import(pathToFileURL(fileURLToPath(file)).href)
}

/** Record-write timings: from the moment an upstream response body completed to its `record:stored` message. */
const writes = { samples: /** @type {number[]} */ ([]), recovered: 0, firstUpstreamDone: 0n, lastRecovered: 0n, lastUpstreamDone: 0n }
/**
 * A `recovered` question waiting for its count: answered once, from `record:stored`, after the write was timed. The bench
 * waits this way rather than polling, so that no question lands on the event loop while a write is being timed.
 */
let awaited = /** @type {{ count: number, reply: () => void } | undefined} */ (undefined)

/**
 * The bench gateway's upstreams and models. `BENCH_RESILIENCE=pool`: a two-key pool and a fallback model, all
 * healthy (what the resilience interceptors cost when nothing fails); `=dead`: the model's upstream refuses
 * connections, so every call fails over to its fallback; `=cross`: the same, to a fallback of the other format
 * (the Gemini model: request and answer translated). Every variant has the Gemini and the Claude model beside the
 * OpenAI one: a configured model costs a call to another model nothing, so the OpenAI figures stay comparable.
 */
function upstreamsFor(resilience) {
  const base = [
    { id: 'gemini-2.5-flash', upstream: 'mock-gemini' },
    { id: 'claude-sonnet-4-5', upstream: 'mock-anthropic' },
    // An Azure OpenAI upstream (the mock's Azure paths, which check no key here): OpenAI's format on Azure's paths.
    { id: 'gpt-azure', upstream: 'mock-azure', upstreamModel: 'gpt-4o-mini' },
  ]
  // Anthropic's base URL has no `/v1`, nor has the mock's Messages API.
  const others = {
    'mock-gemini': { type: 'gemini', baseUrl: upstream },
    'mock-anthropic': { type: 'anthropic', baseUrl: upstream },
    'mock-azure': { type: 'azure', baseUrl: `${upstream}/openai/v1`, keyless: true },
  }
  if (resilience === 'pool' || resilience === 'dead' || resilience === 'cross') {
    const primaryUrl = resilience === 'pool' ? `${upstream}/v1` : `http://127.0.0.1:${process.env.BENCH_DEAD_PORT}/v1`
    return {
      upstreams: {
        primary: { type: 'openai', baseUrl: primaryUrl, apiKeys: ['sk-bench-pool-1', 'sk-bench-pool-2'] },
        backup: { type: 'openai', baseUrl: `${upstream}/v1` },
        ...others,
      },
      models: [
        { id: 'gpt-4o-mini', upstream: 'primary', fallbacks: [resilience === 'cross' ? 'gemini-2.5-flash' : 'backup-model'] },
        { id: 'backup-model', upstream: 'backup', upstreamModel: 'gpt-4o-mini' },
        ...base,
      ],
    }
  }
  return {
    upstreams: { mock: { type: 'openai', baseUrl: `${upstream}/v1` }, ...others },
    models: [{ id: 'gpt-4o-mini', upstream: 'mock' }, ...base],
  }
}

/**
 * BENCH_ROUND_TRIP=1 (bench part 16's floor for limits on Redis): before the gateway sees a request, one INCR of one
 * key in the Redis at BENCH_REDIS_URL, coalesced as the ledger coalesces one owner's checks: one round trip in flight,
 * and requests that come meanwhile share the next. The least any limit exact across processes must pay: one atomic
 * read-modify-write on the shared store per round of calls, with no logic around it.
 */
async function coalescedRoundTrip() {
  const { createClient } = await import('@redis/client')
  const client = createClient({ url: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', socket: { connectTimeout: 2000 } })
  client.on('error', () => {})
  await client.connect()
  const key = `${process.env.BENCH_NAMESPACE ?? 'mg-bench'}:round-trip`
  let inFlight = false
  /** @type {Array<() => void>} */
  let waiting = []
  const send = () => {
    inFlight = true
    const batch = waiting
    waiting = []
    void client.incrBy(key, batch.length).then(() => {
      for (const resolve of batch) resolve()
      if (waiting.length > 0) send()
      else inFlight = false
    })
  }
  return () =>
    new Promise((resolve) => {
      waiting.push(resolve)
      if (!inFlight) send()
    })
}

async function createBenchGateway() {
  const core = await distModule('index')
  if (!core) return undefined
  let store
  if (process.env.BENCH_STORE === 'redis') {
    const { createKeyv } = await import('@keyv/redis')
    store = createKeyv(
      { url: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', socket: { connectTimeout: 2000 } },
      { namespace: process.env.BENCH_NAMESPACE ?? 'mg-bench', connectionTimeout: 2000 },
    )
  }
  const instrument = process.env.BENCH_INSTRUMENT === '1'
  if (instrument) {
    // Undici reports a finished response body on this channel whichever copy of undici is loaded.
    const { subscribe } = await import('node:diagnostics_channel')
    subscribe('undici:request:trailers', () => {
      writes.lastUpstreamDone = process.hrtime.bigint()
      if (writes.firstUpstreamDone === 0n) writes.firstUpstreamDone = writes.lastUpstreamDone
    })
    // Published once the store confirmed the write: the end of what part 6 times. The usage event comes after it
    // and also reads the answer's token counts, which is not the record's write.
    subscribe('model-gateway:record:stored', () => {
      const now = process.hrtime.bigint()
      writes.recovered++
      writes.lastRecovered = now
      if (writes.lastUpstreamDone > 0n) writes.samples.push(Number(now - writes.lastUpstreamDone) / 1e6)
      if (awaited !== undefined && writes.recovered >= awaited.count) {
        const { reply } = awaited
        awaited = undefined
        reply()
      }
    })
  }
  const gateway = core.createGateway({
    ...upstreamsFor(process.env.BENCH_RESILIENCE),
    auth: { apiKeys: [KEY] },
    store,
    // BENCH_STREAMS=finish: every stream is resumable (numbered, kept in memory while it runs).
    recovery: process.env.BENCH_STREAMS ? { streams: process.env.BENCH_STREAMS } : undefined,
    // BENCH_KEEP_ALIVE_MS: keep-alive's interval (0: off); else the default.
    keepAlive: process.env.BENCH_KEEP_ALIVE_MS ? { streamMs: Number(process.env.BENCH_KEEP_ALIVE_MS) } : undefined,
    // BENCH_LIMITS=1: per-owner limits no call reaches, so every call pays a check and a charge and none is refused.
    ...(process.env.BENCH_LIMITS === '1'
      ? {
          pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
          limits: { owners: { requestsPerMinute: 1e12, tokensPerMinute: 1e15, costPerDay: 1e6 } },
        }
      : {}),
    // BENCH_CACHE=1: the response cache, in memory, or in the Redis store with BENCH_STORE=redis.
    ...(process.env.BENCH_CACHE === '1' ? { cache: {} } : {}),
  })
  if (process.env.BENCH_OTEL) await instrumentWithOtel(gateway, process.env.BENCH_OTEL)
  return gateway
}

/**
 * BENCH_OTEL=1: the gateway reported through `model-gateway/otel` to a real OpenTelemetry SDK (global W3C
 * propagator, batched spans, periodic metrics) whose exporters drop everything: what is measured is the gateway's
 * and the SDK's work, not an exporter's network. BENCH_OTEL=als also installs the SDK's AsyncLocalStorage context
 * manager, as `NodeSDK` does; BENCH_OTEL=api instruments without any SDK; BENCH_OTEL=sampled records one trace in ten (a parent-based ratio sampler), as a busy
 * service would.
 */
async function instrumentWithOtel(gateway, variant) {
  const otel = await distModule('otel')
  // The gateway's own share: channels published and heard, spans and metrics handed to the API's no-ops.
  if (variant === 'api') return otel.instrumentGateway(gateway)
  const { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } = await import(
    '@opentelemetry/sdk-trace-node'
  )
  const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics')
  const dropped = (result) => ({ export: (_items, done) => done(result), forceFlush: async () => {}, shutdown: async () => {} })
  const tracerProvider = new NodeTracerProvider({
    spanProcessors: [new BatchSpanProcessor(dropped({ code: 0 }))],
    ...(variant === 'sampled' ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }) } : {}),
  })
  // The gateway passes its parent contexts explicitly: it needs no context manager of its own.
  tracerProvider.register(variant === 'als' ? {} : { contextManager: null })
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: dropped({ code: 0 }), exportIntervalMillis: 5000 })],
  })
  otel.instrumentGateway(gateway, { tracerProvider, meterProvider })
}

/** @returns {Promise<import('node:http').Server | string>} a server, or why this kind cannot run */
async function build() {
  switch (kind) {
    case 'floor-node': {
      const floor = createFloor(upstream)
      return http.createServer(floor.handle)
    }
    case 'floor-express':
    case 'floor-express-node': {
      const { default: express } = await import('express')
      const floor = createFloor(upstream)
      const app = express()
      // The Express way (`res.send`), or the floor's own node:http handler mounted in Express.
      app.use(kind === 'floor-express' ? floor.express : floor.handle)
      return http.createServer(app)
    }
    case 'floor-koa': {
      const { default: Koa } = await import('koa')
      const floor = createFloor(upstream)
      const app = new Koa()
      app.use(floor.koa)
      return http.createServer(app.callback())
    }
    case 'hpm-express': {
      const { default: express } = await import('express')
      const { createProxyMiddleware } = await import('http-proxy-middleware')
      const app = express()
      app.use(createProxyMiddleware({ target: upstream, agent: new http.Agent({ keepAlive: true, maxSockets: Infinity }) }))
      return http.createServer(app)
    }
    case 'fixed-node': {
      // A node:http server that does no work per call: it reads the request and answers the bytes the mock answered
      // the small chat body once, at start. What no gateway work costs: the most any cache hit can reach here.
      const { SMALL_BODY } = await import('./lib/bodies.mjs')
      const answer = Buffer.from(
        await (
          await fetch(`${upstream}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
            body: SMALL_BODY,
          })
        ).arrayBuffer(),
      )
      const headers = { 'content-type': 'application/json', 'content-length': answer.length }
      return http.createServer((req, res) => {
        req.resume()
        req.on('end', () => {
          res.writeHead(200, headers)
          res.end(answer)
        })
      })
    }
    case 'floor-keep': {
      // Part 17b's floor: a body read as node:http gives it (chunks, then joined), one string of it kept, as a
      // background create keeps the event that echoes its request.
      let kept = ''
      return http.createServer((req, res) => {
        const chunks = []
        req.on('data', (chunk) => chunks.push(chunk))
        req.on('end', () => {
          kept = Buffer.concat(chunks).toString('utf8')
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ kept: kept.length }))
        })
      })
    }
    case 'gw-node': {
      const node = await distModule('node')
      const gateway = await createBenchGateway()
      if (!node || !gateway) return 'dist/node.js is not built'
      const handler = node.nodeHandler(gateway)
      const roundTrip = process.env.BENCH_ROUND_TRIP === '1' ? await coalescedRoundTrip() : undefined
      const server = http.createServer(roundTrip ? (req, res) => void roundTrip().then(() => handler(req, res)) : handler)
      // Responses over WebSocket (bench part 20), as the docs wire it.
      if (node.upgradeHandler) server.on('upgrade', node.upgradeHandler(gateway))
      return server
    }
    case 'gw-express': {
      const adapter = await distModule('express')
      if (!adapter) return 'dist/express.js is not built yet'
      const { default: express } = await import('express')
      const app = express()
      app.use(adapter.expressMiddleware(await createBenchGateway()))
      return http.createServer(app)
    }
    case 'gw-koa': {
      const adapter = await distModule('koa')
      if (!adapter) return 'dist/koa.js is not built yet'
      const { default: Koa } = await import('koa')
      const app = new Koa()
      app.use(adapter.koaMiddleware(await createBenchGateway()))
      return http.createServer(app.callback())
    }
    default:
      return `unknown contestant kind ${kind}`
  }
}

/** @type {import('node:perf_hooks').IntervalHistogram | undefined} */
let loopDelay

process.on('message', (message) => {
  const reply = (extra = {}) => process.send?.({ id: message.id, ...extra })
  switch (message.type) {
    case 'loop-delay-start': {
      loopDelay = monitorEventLoopDelay({ resolution: 5 })
      loopDelay.enable()
      return reply()
    }
    case 'loop-delay-stop': {
      loopDelay?.disable()
      const h = loopDelay
      loopDelay = undefined
      return reply({ p99: (h?.percentile(99) ?? Number.NaN) / 1e6, max: (h?.max ?? Number.NaN) / 1e6 })
    }
    case 'memory': {
      if (message.gc && typeof globalThis.gc === 'function') {
        globalThis.gc()
        globalThis.gc()
      }
      return reply(process.memoryUsage())
    }
    case 'recovered': {
      // Answered at once when the count is already there, else by the write that reaches it.
      if (writes.recovered >= message.count) return reply()
      awaited = { count: message.count, reply: () => reply() }
      return
    }
    case 'writes': {
      const span =
        writes.lastRecovered > writes.firstUpstreamDone && writes.firstUpstreamDone > 0n
          ? Number(writes.lastRecovered - writes.firstUpstreamDone) / 1e6
          : 0
      reply({ samples: writes.samples, recovered: writes.recovered, spanMs: span })
      if (message.reset) {
        writes.samples = []
        writes.recovered = 0
        writes.firstUpstreamDone = 0n
        writes.lastRecovered = 0n
        writes.lastUpstreamDone = 0n
      }
      return
    }
    default:
      return reply({ error: `unknown message ${message.type}` })
  }
})

let built
try {
  built = await build()
} catch (error) {
  // A peer that is not installed is a skip, not a failure: the quick run needs only the root's dependencies.
  if (error?.code === 'ERR_MODULE_NOT_FOUND') built = `not installed (${String(error.message).split('\n')[0]})`
  else throw error
}
if (typeof built === 'string') {
  process.send?.({ type: 'skip', reason: built })
  process.disconnect?.()
} else {
  const server = built
  server.keepAliveTimeout = 30_000
  server.headersTimeout = 60_000
  server.requestTimeout = 0
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'ready', port: /** @type {import('node:net').AddressInfo} */ (server.address()).port })
  })
  process.once('SIGTERM', () => process.exit(0))
  process.once('disconnect', () => process.exit(0))
}
