// The upstream of every benchmark: the project's mock upstream (the `model-gateway/testing` entry,
// imported from dist/ like the contestants' entries, as bench/ is a package of its own; bench/run.mjs
// keeps the build current) in its own process, with three bench-only behaviours steered over IPC by
// the harness:
// - default controls spliced into every request body, so contestants that rebuild the body from
//   the parameters they know (and drop the `mock` field) still get the same stream shape;
// - bodies above a threshold are drained and answered with a fixed completion, so parsing 20 MB in
//   the mock does not compete for the core the load generator shares with it;
// - hold/release: requests are parked until released together, to land a burst of responses at once.
import { EventEmitter } from 'node:events'
import { startMockUpstream } from '../dist/testing.js'

const mock = await startMockUpstream({ port: 0, record: false })
const [original] = mock.server.listeners('request')
mock.server.removeAllListeners('request')

/** @type {Buffer | null} `"mock":{...},`, spliced right after the body's opening brace. */
let splice = null
let bigThreshold = 1024 * 1024
let bigDelayMs = 0
let holding = false
/** @type {Array<() => void>} */
let held = []
let bigAnswered = 0

const BIG_REPLY = JSON.stringify({
  id: 'chatcmpl-mock-big',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
})

function answerBig(req, res) {
  req.on('error', () => {})
  req.resume()
  req.once('end', () => {
    const send = () => {
      bigAnswered++
      if (res.destroyed) return
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BIG_REPLY) })
      res.end(BIG_REPLY)
    }
    if (bigDelayMs > 0) setTimeout(send, bigDelayMs)
    else send()
  })
}

/** Hands a request to the mock with the default controls spliced into its body. */
function withDefaults(req, res, insert) {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('error', () => {})
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const edited = body[0] === 0x7b && body.length > 2 ? Buffer.concat([body.subarray(0, 1), insert, body.subarray(1)]) : body
    const fake = new EventEmitter()
    fake.method = req.method
    fake.url = req.url
    fake.headers = req.headers
    fake.socket = req.socket
    original(fake, res)
    fake.emit('data', edited)
    fake.emit('end')
  })
}

function dispatch(req, res) {
  const insert = splice
  if (insert === null || req.method !== 'POST') original(req, res)
  else withDefaults(req, res, insert)
}

mock.server.on('request', (req, res) => {
  const length = Number(req.headers['content-length'] ?? 0)
  if (length > bigThreshold) return answerBig(req, res)
  if (holding) {
    held.push(() => dispatch(req, res))
    return
  }
  dispatch(req, res)
})

process.on('message', (message) => {
  const reply = (extra = {}) => process.send?.({ id: message.id, ...extra })
  switch (message.type) {
    case 'defaults':
      splice = message.mock ? Buffer.from(`"mock":${JSON.stringify(message.mock)},`) : null
      if (message.bigDelayMs !== undefined) bigDelayMs = message.bigDelayMs
      if (message.bigThreshold !== undefined) bigThreshold = message.bigThreshold
      return reply()
    case 'hold':
      holding = true
      return reply()
    case 'held':
      return reply({ held: held.length })
    case 'release': {
      holding = false
      const parked = held
      held = []
      for (const go of parked) go()
      return reply({ released: parked.length })
    }
    case 'stats':
      return reply({ completedCalls: mock.completedCalls, abortedStreams: mock.abortedStreams, bigAnswered })
    default:
      return reply({ error: `unknown message ${message.type}` })
  }
})

process.once('SIGTERM', () => mock.close().then(() => process.exit(0)))
process.once('disconnect', () => mock.close().then(() => process.exit(0)))
process.send?.({ type: 'ready', port: mock.port, url: mock.url })
