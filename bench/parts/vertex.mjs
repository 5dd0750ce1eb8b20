// Part 12c: what Vertex AI costs per call. One gateway serves the same Gemini and Claude models on their own APIs and
// on Vertex AI, all on one mock (bench/vertex-server.mjs): interleaved rounds of c=1 calls give each kind's added p50
// (the gateway's p50 less the mock's own for the body it is sent). The Vertex transport's own cost per call (its
// token, kept and reused, and its longer path) is a Gemini client's passthrough to the Vertex model less the same to
// the Gemini API; the translated rows are judged, as part 12's, against the same client's passthrough.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client } from 'undici'
import { SMALL_BODY } from '../lib/bodies.mjs'
import { ALL } from '../lib/load.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, spread, table, verdictTable } from '../lib/report.mjs'
import { ms, percentile, summary } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const ROOT = new URL('../..', import.meta.url)

/**
 * The authorizer's own cost per call once its token is kept (bench/vertex-token.mjs, run from the source by
 * vite-node), or undefined when vite-node is not installed.
 */
function tokenReuse(log) {
  const viteNode = fileURLToPath(new URL('node_modules/.bin/vite-node', ROOT))
  if (!existsSync(viteNode)) return undefined
  log('vertex token reuse (vite-node bench/vertex-token.mjs)')
  const run = spawnSync(viteNode, [fileURLToPath(new URL('vertex-token.mjs', HERE))], { cwd: fileURLToPath(ROOT), encoding: 'utf8' })
  const line = run.stdout.trim().split('\n').at(-1) ?? ''
  try {
    return JSON.parse(line)
  } catch {
    throw new Error(`bench/vertex-token.mjs: ${run.stderr.slice(-500)}`)
  }
}
const chat = JSON.parse(SMALL_BODY)
const [system, user] = chat.messages
const JSON_HEADERS = { 'content-type': 'application/json' }

/** SMALL_BODY as a Gemini client sends it, and as the gateway translates a chat call to generate-content. */
const GEMINI_BODY = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: user.content }] }],
  systemInstruction: { parts: [{ text: system.content }] },
  generationConfig: { temperature: chat.temperature },
})
const chatBody = (model) => JSON.stringify({ ...chat, model })
/** SMALL_BODY as an Anthropic client sends it, and as a Vertex rawPredict client does (no `model`, its version). */
const MESSAGES_FIELDS = { system: system.content, messages: [user], max_tokens: 256, temperature: chat.temperature }
const MESSAGES_BODY = JSON.stringify({ model: 'claude-sonnet-4-5', ...MESSAGES_FIELDS })
const RAW_PREDICT_BODY = JSON.stringify({ anthropic_version: 'vertex-2023-10-16', ...MESSAGES_FIELDS })
/** Where Vertex-format clients call: a project and location the gateway accepts and never forwards. */
const VERTEX_CLIENT = '/v1/projects/bench-client/locations/us-east5/publishers'

/**
 * Each kind: the gateway call and the mock's own call for what the gateway sends it (the Gemini API's path stands for
 * Vertex's: the mock answers both with the same code, Vertex's after a token lookup).
 */
function kinds(gateway, mockUrl, key) {
  const bearer = { ...JSON_HEADERS, authorization: `Bearer ${key}` }
  const google = { ...JSON_HEADERS, 'x-goog-api-key': key }
  const claude = { ...JSON_HEADERS, 'x-api-key': key, 'anthropic-version': '2023-06-01' }
  const messagesDirect = { origin: mockUrl, path: '/v1/messages', headers: claude, body: MESSAGES_BODY }
  const geminiDirect = {
    origin: mockUrl,
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    headers: JSON_HEADERS,
    body: GEMINI_BODY,
  }
  return {
    chatPassthrough: {
      at: { origin: gateway, path: '/v1/chat/completions', headers: bearer, body: chatBody('gpt-4o-mini') },
      direct: { origin: mockUrl, path: '/v1/chat/completions', headers: JSON_HEADERS, body: chatBody('gpt-4o-mini') },
    },
    chatGemini: {
      at: { origin: gateway, path: '/v1/chat/completions', headers: bearer, body: chatBody('gemini-2.5-flash') },
      direct: geminiDirect,
    },
    chatVertexGemini: {
      at: { origin: gateway, path: '/v1/chat/completions', headers: bearer, body: chatBody('vertex-gemini') },
      direct: geminiDirect,
    },
    geminiPassthrough: {
      at: { origin: gateway, path: '/v1beta/models/gemini-2.5-flash:generateContent', headers: google, body: GEMINI_BODY },
      direct: geminiDirect,
    },
    geminiVertex: {
      at: { origin: gateway, path: '/v1beta/models/vertex-gemini:generateContent', headers: google, body: GEMINI_BODY },
      direct: geminiDirect,
    },
    // Vertex-format clients (`@google/genai` in Vertex mode, Claude Code's rawPredict) on the models' own APIs.
    vertexClientGemini: {
      at: { origin: gateway, path: `${VERTEX_CLIENT}/google/models/gemini-2.5-flash:generateContent`, headers: google, body: GEMINI_BODY },
      direct: geminiDirect,
    },
    messagesPassthrough: {
      at: { origin: gateway, path: '/v1/messages', headers: claude, body: MESSAGES_BODY },
      direct: messagesDirect,
    },
    vertexClientClaude: {
      at: {
        origin: gateway,
        path: `${VERTEX_CLIENT}/anthropic/models/claude-sonnet-4-5:rawPredict`,
        headers: claude,
        body: RAW_PREDICT_BODY,
      },
      direct: messagesDirect,
    },
  }
}

/** p50 per kind over `count` interleaved calls, one keep-alive connection per kind and side. */
async function interleavedP50(calls, count) {
  const names = Object.keys(calls)
  const clients = new Map()
  const clientFor = (origin) => {
    if (!clients.has(origin)) clients.set(origin, new Client(origin, { keepAliveTimeout: 30_000, pipelining: 1 }))
    return clients.get(origin)
  }
  const samples = Object.fromEntries(
    names.flatMap((n) => [
      [`${n}.at`, []],
      [`${n}.direct`, []],
    ]),
  )
  try {
    for (let i = 0; i < count; i++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length]
        for (const side of i % 2 === 0 ? ['at', 'direct'] : ['direct', 'at']) {
          const { origin, path, headers, body } = calls[name][side]
          const start = process.hrtime.bigint()
          const res = await clientFor(origin).request({ path, method: 'POST', headers, body })
          await res.body.dump({ limit: ALL })
          if (res.statusCode !== 200) throw new Error(`${name} (${side}) answered ${res.statusCode}`)
          samples[`${name}.${side}`].push(ms(process.hrtime.bigint() - start))
        }
      }
    }
  } finally {
    await Promise.all([...clients.values()].map((client) => client.close()))
  }
  return Object.fromEntries(names.map((n) => [n, percentile(samples[`${n}.at`], 50) - percentile(samples[`${n}.direct`], 50)]))
}

/** @param {{ cfg: any, log: (s: string) => void, plan: any, serverEnv: Record<string, string> }} ctx */
export async function vertexPart(ctx) {
  const { cfg, log, plan, serverEnv } = ctx
  const server = await startChild(new URL('vertex-server.mjs', HERE).pathname, [], { cpus: plan.server, env: serverEnv })
  if (server.ready.type !== 'ready') return { text: section('12c. Vertex AI', [], `Skipped: ${server.ready.reason}.`) }
  const rounds = []
  try {
    const calls = kinds(`http://127.0.0.1:${server.ready.port}`, server.ready.mockUrl, serverEnv.BENCH_KEY ?? 'sk-bench')
    await interleavedP50(calls, Math.max(20, Math.floor(cfg.latencyWarmup / 5)))
    for (let r = 0; r < cfg.rounds; r++) {
      log(`vertex round ${r + 1}/${cfg.rounds}`)
      rounds.push(await interleavedP50(calls, Math.max(50, Math.floor(cfg.latencyCount / 5))))
    }
  } finally {
    await server.stop()
  }
  const token = tokenReuse(log)
  const of = (name) => summary(rounds.map((round) => round[name]))
  const perRound = (a, b, op) => summary(rounds.map((round) => op(round[a], round[b])))
  const transportUs = perRound('geminiVertex', 'geminiPassthrough', (a, b) => (a - b) * 1000)
  const translated = perRound('chatVertexGemini', 'chatPassthrough', (a, b) => a / b)
  const rawPredictRatio = perRound('vertexClientClaude', 'messagesPassthrough', (a, b) => a / b)
  const rows = [
    ['chat passthrough (gpt-4o-mini)', spread(of('chatPassthrough'), 3)],
    ['chat → Gemini API (translated)', spread(of('chatGemini'), 3)],
    ['chat → Vertex AI Gemini (translated)', spread(of('chatVertexGemini'), 3)],
    ['Gemini client → Gemini API (passthrough)', spread(of('geminiPassthrough'), 3)],
    ['Gemini client → Vertex AI Gemini (passthrough, token and path)', spread(of('geminiVertex'), 3)],
    ['Vertex-format Gemini client → Gemini API (passthrough)', spread(of('vertexClientGemini'), 3)],
    ['Messages client → Anthropic API (passthrough)', spread(of('messagesPassthrough'), 3)],
    ['Vertex rawPredict client → Anthropic API (passthrough, spoken body)', spread(of('vertexClientClaude'), 3)],
  ]
  const ratios = [
    ['chat → Vertex AI Gemini ÷ chat passthrough added p50', spread(translated)],
    [
      'chat → Vertex AI Gemini − chat → Gemini API added p50 ms',
      spread(
        perRound('chatVertexGemini', 'chatGemini', (a, b) => a - b),
        3,
      ),
    ],
    ['Vertex transport per call end to end (Gemini client → Vertex − → Gemini API), µs', spread(transportUs, 1)],
    ['Vertex rawPredict client ÷ Messages client added p50 (Anthropic API)', spread(rawPredictRatio)],
    [
      'token reuse per call: the authorizer alone / as the send awaits it, µs',
      token ? `${num(token.syncUs, 2)} / ${num(token.awaitedUs, 2)}` : '—',
    ],
  ]
  const verdicts = [
    {
      target: 'Vertex AI translated added p50 ≤ 1.3× the same client’s passthrough',
      measured: ratio(translated.median),
      // A median below 0 is noise larger than the effect: not a measurement.
      ok: translated.median > 0 && of('chatPassthrough').median > 0 ? translated.median <= 1.3 : undefined,
    },
    {
      target: 'Vertex rawPredict client added p50 ≤ 1.3× the Messages passthrough’s',
      measured: ratio(rawPredictRatio.median),
      ok: rawPredictRatio.median > 0 && of('messagesPassthrough').median > 0 ? rawPredictRatio.median <= 1.3 : undefined,
    },
    {
      target: 'Vertex token reuse per call ≤ 30 µs',
      measured: token ? `${num(token.awaitedUs, 2)} µs (${token.tokensIssued} token fetched)` : '—',
      ok: token ? token.awaitedUs <= 30 : undefined,
    },
  ]
  const text = section(
    '12c. Vertex AI: added p50 per call at c=1 (ms; median of rounds, [min–max])',
    ['One gateway, the same models on their own APIs and on Vertex AI, one mock; each kind less the mock’s own p50.'],
    `${table(['call', 'added p50 ms'], rows)}\n\n${table(['ratio', 'value'], ratios)}\n\n${verdictTable(verdicts)}`,
  )
  return { text, verdicts, rounds }
}
