// Part 20: Responses over WebSocket, as Codex uses it. The same 10-turn tool loop over one socket (each turn sending
// only its new items after `previous_response_id`) and as HTTP streams (each turn sending the whole conversation, as
// Codex does without the socket), against the same gateway and mock: time per turn and bytes the client sends per
// turn. Then the server's RSS per idle, warmed-up socket.
import http from 'node:http'
import WebSocket from 'ws'
import { memoryOf, startChild } from '../lib/proc.mjs'
import { num, section, table } from '../lib/report.mjs'
import { median } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const TURNS = 10
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** What Codex sends on every turn: a long developer message and its tools (about 10 KB, as a short session's). */
const DEVELOPER = { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent. '.repeat(400) }] }
const TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a shell command.',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  },
]
const COMMON = { model: 'gpt-4o-mini', tools: TOOLS, tool_choice: 'auto', store: false, stream: true }

const userItem = (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })
const outputOf = (callId, turn) => [
  { type: 'function_call_output', call_id: callId, output: `output of step ${turn}` },
  userItem(`now step ${turn + 1}`),
]

/** One socket's loop: resolves with each turn's milliseconds and wire bytes sent. */
async function socketLoop(origin, key) {
  const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/v1/responses`, {
    headers: { authorization: `Bearer ${key}` },
    perMessageDeflate: true,
  })
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  const frames = []
  let wake
  ws.on('message', (data) => {
    frames.push(JSON.parse(data.toString('utf8')))
    wake?.()
  })
  const create = async (body) => {
    const from = frames.length
    ws.send(JSON.stringify({ type: 'response.create', ...body }))
    for (;;) {
      const end = frames.slice(from).find((f) => f.type === 'response.completed' || f.type === 'error' || f.type === 'response.failed')
      if (end) return end
      await new Promise((resolve) => (wake = resolve))
    }
  }
  const warm = await create({ ...COMMON, input: [DEVELOPER], generate: false })
  let previous = warm.response.id
  let items = [userItem('list the files')]
  const ms = []
  const bytes = []
  for (let turn = 1; turn <= TURNS; turn++) {
    const sentBefore = ws._socket.bytesWritten
    const started = performance.now()
    const end = await create({ ...COMMON, previous_response_id: previous, input: items })
    ms.push(performance.now() - started)
    bytes.push(ws._socket.bytesWritten - sentBefore)
    if (end.type !== 'response.completed') throw new Error(`turn ${turn}: ${JSON.stringify(end).slice(0, 200)}`)
    const call = end.response.output.find((item) => item.type === 'function_call')
    previous = end.response.id
    items = outputOf(call.call_id, turn)
  }
  ws.close()
  return { ms, bytes }
}

/** The same loop as HTTP streams on one keep-alive connection: each turn carries the whole conversation. */
async function httpLoop(origin, key) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  let input = [DEVELOPER, userItem('list the files')]
  const ms = []
  const bytes = []
  try {
    for (let turn = 1; turn <= TURNS; turn++) {
      const body = JSON.stringify({ ...COMMON, input })
      const started = performance.now()
      const { text, sent } = await new Promise((resolve, reject) => {
        const req = http.request(`${origin}/v1/responses`, {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        })
        let before = 0
        req.once('socket', (socket) => (before = socket.bytesWritten))
        req.once('response', (res) => {
          let out = ''
          res.setEncoding('utf8')
          res.on('data', (chunk) => (out += chunk))
          res.on('end', () => resolve({ text: out, sent: req.socket.bytesWritten - before }))
        })
        req.once('error', reject)
        req.end(body)
      })
      ms.push(performance.now() - started)
      bytes.push(sent)
      const completed = text
        .split('\n')
        .filter((line) => line.startsWith('data: ') && line.includes('"response.completed"'))
        .map((line) => JSON.parse(line.slice(6)))[0]
      if (!completed) throw new Error(`turn ${turn}: no response.completed`)
      const call = completed.response.output.find((item) => item.type === 'function_call')
      input = [...input, ...completed.response.output, ...outputOf(call.call_id, turn)]
    }
  } finally {
    agent.destroy()
  }
  return { ms, bytes }
}

/** RSS of the server per idle socket: `n` sockets opened and warmed up, RSS after − before. */
async function idleSockets(origin, key, pid, n) {
  const rssBefore = memoryOf(pid).rss
  const sockets = []
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, async () => {
      const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/v1/responses`, {
        headers: { authorization: `Bearer ${key}` },
        perMessageDeflate: true,
      })
      await new Promise((resolve, reject) => {
        ws.once('open', resolve)
        ws.once('error', reject)
      })
      const done = new Promise((resolve) => ws.once('message', resolve))
      ws.send(JSON.stringify({ type: 'response.create', ...COMMON, input: [userItem('be brief')], generate: false }))
      await done
      return ws
    })
    sockets.push(...(await Promise.all(batch)))
  }
  await sleep(500)
  const rss = memoryOf(pid).rss - rssBefore
  for (const ws of sockets) ws.terminate()
  return rss / n
}

export async function websocketPart(ctx) {
  const { cfg, log, plan, targetFor } = ctx
  const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env: ctx.serverEnv })
  if (server.ready.type !== 'ready') return { text: `### 20. Responses over WebSocket\n\nSkipped: ${server.ready.reason}\n` }
  const target = targetFor('gw-node', server.ready.port)
  const key = target.headers.authorization.slice('Bearer '.length)
  const got = { socket: { ms: [], bytes: [] }, http: { ms: [], bytes: [] } }
  let perSocket
  try {
    // A warm-up loop of each.
    await socketLoop(target.origin, key)
    await httpLoop(target.origin, key)
    for (let r = 0; r < cfg.rounds; r++) {
      const kinds = r % 2 === 0 ? ['socket', 'http'] : ['http', 'socket']
      for (const kind of kinds) {
        const loop = await (kind === 'socket' ? socketLoop : httpLoop)(target.origin, key)
        got[kind].ms.push(...loop.ms)
        got[kind].bytes.push(...loop.bytes)
      }
      log(`websocket: round ${r + 1}/${cfg.rounds} done`)
    }
    perSocket = await idleSockets(target.origin, key, server.child.pid, cfg.idleSockets)
  } finally {
    await server.stop()
  }
  const sum = (values) => values.reduce((a, b) => a + b, 0)
  const rows = ['socket', 'http'].map((kind) => [
    kind === 'socket' ? 'WebSocket, new items only' : 'HTTP streams, whole conversation',
    num(median(got[kind].ms), 2),
    num(median(got[kind].bytes), 0),
    num(sum(got[kind].bytes) / got[kind].bytes.length / 1024, 1),
  ])
  const text = section(
    `20. Responses over WebSocket: a ${TURNS}-turn tool loop (${cfg.rounds} round(s)), and idle sockets`,
    [
      `The same gateway (node:http, \`upgradeHandler\`) and mock; each turn answers a function call. ms = one turn from send to \`response.completed\` (median over all turns); bytes = what the client wrote on its connection for the turn (frames compressed by permessage-deflate, or the HTTP request). Idle: ${cfg.idleSockets} sockets opened and warmed up (\`generate: false\`), server RSS after − before, per socket: **${num(perSocket / 1024, 1)} KiB**.`,
    ],
    table(['transport', 'ms per turn (median)', 'bytes sent per turn (median)', 'KiB sent per turn (mean)'], rows),
  )
  return { rows: { socket: median(got.socket.ms), http: median(got.http.ms), perSocket }, text }
}
