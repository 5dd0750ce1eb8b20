// Part 12c's token-reuse figure: what a Vertex AI upstream's authorizer costs a call once its token is kept, timed in
// one process with nothing else running, as part 12c's end-to-end rows cannot resolve microseconds on a busy machine.
// Runs the source (vite-node, from bench/parts/vertex.mjs), with the mock's token endpoint issuing the token; prints
// `{ syncUs, awaitedUs }`: per call, the authorizer alone and as createSend awaits it.
import { performance } from 'node:perf_hooks'
import { vertexAuthorizer } from '../src/dialects/vertex/credentials.ts'
import { startMockUpstream } from '../src/testing/index.ts'

const CALLS = Number(process.env.VERTEX_TOKEN_CALLS ?? 200_000)
const mock = await startMockUpstream({ record: false })
const authorizer = vertexAuthorizer('bench', { type: 'vertex', credentials: mock.vertex.createServiceAccount() })
const request = () => ({
  method: 'POST',
  origin: mock.url,
  path: '/v1/x',
  headers: ['content-type', 'application/json'],
  body: Buffer.alloc(0),
})
// The first call fetches the token; the rest reuse it.
await authorizer.authorize(request())
for (let i = 0; i < 20_000; i++) authorizer.authorize(request())
let start = performance.now()
for (let i = 0; i < CALLS; i++) authorizer.authorize(request())
const syncUs = ((performance.now() - start) * 1000) / CALLS
start = performance.now()
for (let i = 0; i < CALLS; i++) await Promise.resolve(authorizer.authorize(request()))
const awaitedUs = ((performance.now() - start) * 1000) / CALLS
// Without the authorizer: what building the request object alone costs, taken off neither figure (an upper bound).
start = performance.now()
for (let i = 0; i < CALLS; i++) await Promise.resolve(request())
const baselineUs = ((performance.now() - start) * 1000) / CALLS
await mock.close()
console.log(JSON.stringify({ syncUs, awaitedUs, baselineUs, tokensIssued: mock.vertex.tokensIssued }))
process.exit(0)
