// A gateway reported to OpenTelemetry, spans and metrics printed to the console. It runs against the local mock
// upstream, sends itself one call and one stream with a client `traceparent`, and keeps serving:
//
//   npm i @opentelemetry/api @opentelemetry/sdk-trace-node @opentelemetry/sdk-metrics
//   node examples/otel.mjs
//
// In production, swap the console exporters for OTLP ones (@opentelemetry/exporter-trace-otlp-http, ...).
import http from 'node:http'
import { metrics } from '@opentelemetry/api'
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { ConsoleSpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { createGateway } from 'model-gateway'
import { nodeHandler } from 'model-gateway/node'
import { instrumentGateway } from 'model-gateway/otel'
import { startMockUpstream } from 'model-gateway/testing'

// The SDK first: `register()` installs the global tracer provider, the W3C trace-context propagator (which reads
// the client's `traceparent` and writes the upstream's) and the async context manager.
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] })
tracerProvider.register()
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 10_000 })],
})
metrics.setGlobalMeterProvider(meterProvider)

const port = Number(process.env.PORT ?? 8080)
const demoKey = 'sk-demo-key'
const mock = await startMockUpstream({ delayMs: Number(process.env.MOCK_DELAY_MS ?? 200) })
const gateway = createGateway({
  upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1` } },
  models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
  auth: { apiKeys: [demoKey] },
})
// Only this gateway; `instrumentGateway()` would report every gateway in the process. Uses the global providers.
const stopTelemetry = instrumentGateway(gateway)

const server = http.createServer(nodeHandler(gateway))
server.listen(port, '127.0.0.1', async () => {
  const base = `http://127.0.0.1:${server.address().port}`
  console.log(`model-gateway listening on ${base}, reporting to the console\n`)
  const headers = {
    authorization: `Bearer ${demoKey}`,
    'content-type': 'application/json',
    // A client already tracing: the gateway's spans join its trace.
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  }
  const messages = [{ role: 'user', content: 'Say hello.' }]
  for (const stream of [false, true]) {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'gpt-4o-mini', messages, stream, stream_options: stream ? { include_usage: true } : undefined }),
    })
    await res.text()
    console.log(`${stream ? 'stream' : 'call'} answered ${res.status}, x-request-id ${res.headers.get('x-request-id')}`)
  }
  await meterProvider.forceFlush()
  console.log(`\nTry: curl -s ${base}/v1/chat/completions -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' \\
  -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'`)
})

async function shutdown() {
  server.close()
  server.closeIdleConnections()
  await gateway.close()
  stopTelemetry()
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
  await mock.close()
  process.exit(0)
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
