// A local stand-in for the OpenAI, Gemini and Anthropic APIs, so the examples run with no key and no network: the mock
// upstream of `model-gateway/testing` (src/testing/), the one the tests and benchmarks use, run on its own:
//
//   node examples/mock-upstream.mjs        # listens on MOCK_PORT (default 8787)
//
// MOCK_HOST, MOCK_DELAY_MS and MOCK_API_KEY set the interface, a delay before every answer and a
// key the mock demands. Per-request controls (the `mock` body field) are documented with the
// `MockControls` type of model-gateway/testing. Needs the package built (`npm run build`).

import { startMockUpstream } from 'model-gateway/testing'

const port = Number(process.env.MOCK_PORT ?? 8787)
const delay = Number(process.env.MOCK_DELAY_MS ?? 0)
const mock = await startMockUpstream({
  port,
  host: process.env.MOCK_HOST ?? '127.0.0.1',
  delayMs: Number.isFinite(delay) ? delay : 0,
  apiKey: process.env.MOCK_API_KEY || undefined,
  record: false,
})
console.log(`mock upstream listening on ${mock.url}`)
const stop = () => {
  mock.close().then(() => process.exit(0))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
