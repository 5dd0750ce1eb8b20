// What the OpenTelemetry SDK costs per gateway call on its own, without a gateway or a request: the four histogram
// records `model-gateway/otel` makes per call (with attribute sets built once, as it does) and its SERVER and CLIENT
// spans (the same attributes, the CLIENT span's context injected into a header list), set up as BENCH_OTEL=1 sets up
// the SDK: batched spans and periodic metrics, exporters that drop everything. Prints CPU µs per call (user + system,
// garbage collection included) as one JSON line: the part of the `on` row no subscriber can take away.
import { propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

const CALLS = Number(process.argv[2] ?? 200_000)
const dropped = (result) => ({ export: (_items, done) => done(result), forceFlush: async () => {}, shutdown: async () => {} })
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: dropped({ code: 0 }), exportIntervalMillis: 5000 })],
})
const meter = meterProvider.getMeter('model-gateway')
const clientDuration = meter.createHistogram('gen_ai.client.operation.duration', { unit: 's' })
const serverDuration = meter.createHistogram('gen_ai.server.request.duration', { unit: 's' })
const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', { unit: '{token}' })
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropped({ code: 0 }))] })
tracerProvider.register({ contextManager: null })
const tracer = tracerProvider.getTracer('model-gateway')

const measured = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini' }
const answered = { ...measured, 'gen_ai.response.model': 'gpt-4o-mini' }
const input = { ...answered, 'gen_ai.token.type': 'input' }
const output = { ...answered, 'gen_ai.token.type': 'output' }
const serverStart = { ...measured, 'gen_ai.request.stream': false }
const clientStart = { ...serverStart, 'model_gateway.upstream': 'mock' }
const HEADER_LIST = { set: (headers, name, value) => headers.push(name, value) }

function metricsOfOneCall() {
  clientDuration.record(0.0002, answered)
  serverDuration.record(0.0003, answered)
  tokenUsage.record(12, input)
  tokenUsage.record(7, output)
}

function spansOfOneCall(i) {
  const server = tracer.startSpan(
    'chat gpt-4o-mini',
    { kind: SpanKind.SERVER, startTime: Date.now(), attributes: serverStart },
    ROOT_CONTEXT,
  )
  server.setAttribute('model_gateway.request_id', `req_${i}`)
  const parent = trace.setSpan(ROOT_CONTEXT, server)
  const client = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT, attributes: clientStart }, parent)
  propagation.inject(trace.setSpan(parent, client), [], HEADER_LIST)
  client.setAttribute('http.response.status_code', 200)
  client.setAttribute('gen_ai.response.model', 'gpt-4o-mini')
  client.end()
  server.setAttribute('http.response.status_code', 200)
  server.setAttribute('gen_ai.response.finish_reasons', ['stop'])
  server.setAttribute('gen_ai.usage.input_tokens', 12)
  server.setAttribute('gen_ai.usage.output_tokens', 7)
  server.setAttribute('gen_ai.response.model', 'gpt-4o-mini')
  server.end()
}

/** CPU µs per call of `work`, after a warm-up. */
function cpuPerCall(work) {
  for (let i = 0; i < CALLS / 10; i++) work(i)
  const before = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) work(i)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / CALLS
}

const metrics = cpuPerCall(metricsOfOneCall)
const spans = cpuPerCall(spansOfOneCall)
console.log(JSON.stringify({ metrics, spans }))
await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
