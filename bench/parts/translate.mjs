// Part 12: what translation costs. A chat-completions client calling the bench gateway's `gemini-2.5-flash` model
// (its request translated to generate-content, the answer back to a chat.completion) against the same client calling
// `gpt-4o-mini` (byte-exact passthrough), on one gateway, in interleaved rounds: added p50 at c=1, req/s at c=32,
// and the inter-frame p99 of a 64-delta stream. The same for a Responses client (`POST /v1/responses`): passthrough
// to `gpt-4o-mini`, translated to `gemini-2.5-flash`. The Responses passthrough row lives here rather than in part 1,
// whose contestants all send one chat body to one path. An embeddings call on the same model rides along in the
// latency rounds: the added p50 of another passthrough route, `POST /v1/embeddings`. And a Messages client
// (`POST /v1/messages`) on `claude-sonnet-4-5` (passthrough), `gpt-4o-mini` and `gemini-2.5-flash` (translated):
// translate-messages.mjs.
import { Client } from 'undici'
import { SMALL_BODY, STREAM_BODY } from '../lib/bodies.mjs'
import { ALL, readStream, saturate } from '../lib/load.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, spread, table, verdictTable } from '../lib/report.mjs'
import { median, ms, percentile, summary } from '../lib/stats.mjs'
import { MESSAGES_KINDS, messagesCalls, messagesReport, messagesStreamEnded } from './translate-messages.mjs'

const HERE = new URL('..', import.meta.url)
const MODEL = 'gemini-2.5-flash'

/** The passthrough bodies, naming the Gemini-upstream model instead. @param {string} body */
const translated = (body) => JSON.stringify({ ...JSON.parse(body), model: MODEL })

/**
 * SMALL_BODY as the gateway translates it: what a Gemini client would send the mock itself, so that "added" is the
 * gateway's own time for both kinds of call.
 */
/** The stream body as a Gemini client sends it. */
const GEMINI_STREAM_BODY = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: JSON.parse(STREAM_BODY).messages[0].content }] }] })

/** SMALL_BODY as a Responses client sends it, to a model of each format. @param {string} model */
const responsesBody = (model) => {
  const chat = JSON.parse(SMALL_BODY)
  return JSON.stringify({ model, instructions: chat.messages[0].content, input: chat.messages[1].content, temperature: chat.temperature })
}
/** STREAM_BODY as a Responses client sends it. @param {string} model */
const responsesStreamBody = (model) => JSON.stringify({ model, input: JSON.parse(STREAM_BODY).messages[0].content, stream: true })

const GEMINI_SMALL_BODY = (() => {
  const chat = JSON.parse(SMALL_BODY)
  return JSON.stringify({
    contents: [{ role: 'user', parts: [{ text: chat.messages[1].content }] }],
    systemInstruction: { parts: [{ text: chat.messages[0].content }] },
    generationConfig: { temperature: chat.temperature },
  })
})()

/** An embeddings request of the passthrough model, as small as SMALL_BODY's user message. */
const EMBEDDINGS_BODY = JSON.stringify({ model: 'gpt-4o-mini', input: JSON.parse(SMALL_BODY).messages[1].content })

/** Round r starts at another kind, so neither always runs first. */
const order = (kinds, r) => [...kinds.slice(r % kinds.length), ...kinds.slice(0, r % kinds.length)]

/**
 * p50 per call of `count` requests of each call in turn (one keep-alive connection each), so that every call is
 * measured over the same stretch of time: on a shared machine, back-to-back batches would meet different load.
 * @param {Array<{ key: string, target: import('../lib/load.mjs').Target, body: string }>} calls @param {number} count
 */
async function interleavedP50(calls, count) {
  const clients = calls.map((c) => new Client(c.target.origin, { keepAliveTimeout: 30_000, pipelining: 1 }))
  const samples = calls.map(() => [])
  try {
    for (let i = 0; i < count; i++) {
      for (let j = 0; j < calls.length; j++) {
        const n = (i + j) % calls.length
        const { target, body } = calls[n]
        const start = process.hrtime.bigint()
        const res = await clients[n].request({ path: target.path, method: 'POST', headers: target.headers, body })
        await res.body.dump({ limit: ALL })
        if (res.statusCode !== 200) throw new Error(`${calls[n].key} answered ${res.statusCode}`)
        samples[n].push(ms(process.hrtime.bigint() - start))
      }
    }
  } finally {
    await Promise.all(clients.map((client) => client.close()))
  }
  return Object.fromEntries(calls.map((c, n) => [c.key, percentile(samples[n], 50)]))
}

async function measure(ctx, gateway) {
  const { cfg, log, mock } = ctx
  const messages = messagesCalls({ gateway, mockUrl: mock.ready.url, key: ctx.serverEnv.BENCH_KEY })
  const ofMessages = (field) => Object.fromEntries(MESSAGES_KINDS.map((k) => [k, messages[k][field]]))
  const direct = {
    passthrough: { origin: mock.ready.url, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } },
    translated: {
      origin: mock.ready.url,
      path: `/v1beta/models/${MODEL}:generateContent`,
      headers: { 'content-type': 'application/json' },
    },
  }
  direct.gemini = direct.translated
  direct.responses = { ...direct.passthrough, path: '/v1/responses' }
  direct.embeddings = { ...direct.passthrough, path: '/v1/embeddings' }
  // Azure: the chat body the gateway sends the mock's Azure path, against the same body sent there directly.
  direct.azure = { ...direct.passthrough, path: '/openai/v1/chat/completions' }
  direct.azurePass = direct.azure
  direct.responsesGemini = direct.translated
  Object.assign(direct, ofMessages('direct'))
  const responsesAt = { ...gateway, path: '/v1/responses' }
  // A Gemini client on the same model: the Gemini upstream's path through the gateway without translation, so the
  // difference between the two Gemini-upstream rows is the translation's own.
  const at = {
    passthrough: gateway,
    translated: gateway,
    gemini: { ...gateway, path: `/v1beta/models/${MODEL}:generateContent` },
    responses: responsesAt,
    responsesGemini: responsesAt,
    embeddings: { ...gateway, path: '/v1/embeddings' },
    azure: { ...gateway, path: '/v1beta/models/gpt-azure:generateContent' },
    azurePass: gateway,
    ...ofMessages('at'),
  }
  const body = {
    passthrough: SMALL_BODY,
    translated: translated(SMALL_BODY),
    gemini: GEMINI_SMALL_BODY,
    responses: responsesBody('gpt-4o-mini'),
    responsesGemini: responsesBody(MODEL),
    embeddings: EMBEDDINGS_BODY,
    azure: GEMINI_SMALL_BODY,
    azurePass: JSON.stringify({ ...JSON.parse(SMALL_BODY), model: 'gpt-azure' }),
    ...ofMessages('body'),
  }
  // The translated Responses body reaches the mock as the very generate-content body a Gemini client sends.
  const directBody = {
    ...body,
    translated: GEMINI_SMALL_BODY,
    responsesGemini: GEMINI_SMALL_BODY,
    azure: SMALL_BODY,
    azurePass: SMALL_BODY,
    ...ofMessages('directBody'),
  }
  const kinds = ['passthrough', 'translated', 'responses', 'responsesGemini', ...MESSAGES_KINDS]
  const all = [...kinds, 'gemini']
  // Measured for latency only: no throughput run, no stream.
  const whole = [...all, 'embeddings', 'azure', 'azurePass']
  const got = Object.fromEntries(whole.map((k) => [k, { added50: [], rps: [], failed: 0, gap99: [], ttft: [], frames: new Set() }]))

  const calls = whole.flatMap((k) => [
    { key: `gw ${k}`, target: at[k], body: body[k] },
    { key: `direct ${k}`, target: direct[k], body: directBody[k] },
  ])
  await interleavedP50(calls, cfg.latencyWarmup)
  for (const k of kinds) await saturate(at[k], body[k], cfg.connections, cfg.throughputWarmupS)
  for (let r = 0; r < cfg.rounds; r++) {
    const p50 = await interleavedP50(calls, cfg.latencyCount)
    for (const k of whole) got[k].added50.push(p50[`gw ${k}`] - p50[`direct ${k}`])
    for (const k of order(kinds, r)) {
      const result = await saturate(at[k], body[k], cfg.connections, cfg.throughputS)
      got[k].rps.push(result.rps)
      got[k].failed += result.failed
    }
    log(`translate: round ${r + 1}/${cfg.rounds} (whole calls) done`)
  }

  // Ten bytes a delta: with the short echo most of 64 deltas would be empty, which Gemini's side has no event for.
  await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: cfg.sseFrameGapMs, content_bytes: 640 } })
  const client = new Client(gateway.origin, { keepAliveTimeout: 30_000 })
  const streamBody = {
    passthrough: STREAM_BODY,
    translated: translated(STREAM_BODY),
    gemini: GEMINI_STREAM_BODY,
    responses: responsesStreamBody('gpt-4o-mini'),
    responsesGemini: responsesStreamBody(MODEL),
    ...ofMessages('streamBody'),
  }
  // A Gemini client streaming the same model: the Gemini route's own pacing, untranslated, the fair baseline.
  const streamAt = { ...at, gemini: { ...gateway, path: `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse` } }
  try {
    for (const k of all) await readStream(client, streamAt[k], streamBody[k])
    for (let r = 0; r < cfg.sseRounds; r++) {
      const gaps = Object.fromEntries(all.map((k) => [k, []]))
      const ttfts = Object.fromEntries(all.map((k) => [k, []]))
      // One stream of each kind in turn, so a busy spell of the machine falls on all alike.
      for (let s = 0; s < cfg.sseStreams; s++) {
        for (const k of order(all, s)) {
          const stream = await readStream(client, streamAt[k], streamBody[k])
          // Only chat streams end with [DONE]; Google's and Responses streams just end.
          if (!stream.done && (k === 'passthrough' || k === 'translated')) throw new Error(`a ${k} stream ended without [DONE]`)
          if (MESSAGES_KINDS.includes(k) && !messagesStreamEnded(stream)) throw new Error(`a ${k} stream ended without message_stop`)
          gaps[k].push(...stream.gaps)
          ttfts[k].push(stream.ttft)
          got[k].frames.add(stream.frames)
        }
      }
      for (const k of all) {
        got[k].gap99.push(percentile(gaps[k], 99))
        got[k].ttft.push(median(ttfts[k]))
      }
      log(`translate: round ${r + 1}/${cfg.sseRounds} (streams) done`)
    }
  } finally {
    await client.close()
    await mock.request({ type: 'defaults', mock: null })
  }
  return got
}

export async function translatePart(ctx) {
  const { plan, targetFor } = ctx
  const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env: ctx.serverEnv })
  if (server.ready.type !== 'ready') return { text: `### 12. Translation\n\nSkipped: ${server.ready.reason}\n` }
  let got
  try {
    got = await measure(ctx, targetFor('gw-node', server.ready.port))
  } finally {
    await server.stop()
  }
  const { passthrough: pass, translated: trans, gemini, responses, responsesGemini, embeddings, azure, azurePass } = got
  const added = {
    pass: summary(pass.added50),
    trans: summary(trans.added50),
    gemini: summary(gemini.added50),
    responses: summary(responses.added50),
    responsesGemini: summary(responsesGemini.added50),
    embeddings: summary(embeddings.added50),
    azure: summary(azure.added50),
    azurePass: summary(azurePass.added50),
    ...Object.fromEntries(MESSAGES_KINDS.map((k) => [k, summary(got[k].added50)])),
  }
  const messagesPart = messagesReport(got)
  const addedRatio = summary(trans.added50.map((v, r) => v / pass.added50[r]))
  // A Gemini client on an Azure model (translated) against the same client passthrough to the Gemini API.
  const azureRatio = summary(azure.added50.map((v, r) => v / gemini.added50[r]))
  const responsesRatio = summary(responsesGemini.added50.map((v, r) => v / responses.added50[r]))
  const responsesGapOwn = summary(responsesGemini.gap99.map((v, r) => v - gemini.gap99[r]))
  const translationOwn = summary(trans.added50.map((v, r) => v - gemini.added50[r]))
  const rpsRatio = summary(trans.rps.map((v, r) => v / pass.rps[r]))
  const gapDelta = summary(trans.gap99.map((v, r) => v - pass.gap99[r]))
  // The same upstream route untranslated: what translating the events adds, apart from the route's own pacing.
  const gapOwn = summary(trans.gap99.map((v, r) => v - gemini.gap99[r]))
  const row = (label, g, a) => [
    label,
    spread(a, 3),
    g.rps.length ? spread(summary(g.rps), 0) : '—',
    g.rps.length ? String(g.failed) : '—',
    g.ttft.length ? spread(summary(g.ttft), 3) : '—',
    g.gap99.length ? spread(summary(g.gap99), 3) : '—',
    [...g.frames].join('/') || '—',
  ]
  const verdicts = [
    {
      target: 'translated non-stream added p50 at c=1 ≤ 1.3× passthrough’s',
      measured: ratio(addedRatio.median),
      ok: Number.isFinite(addedRatio.median) ? addedRatio.median <= 1.3 : undefined,
    },
    {
      target: 'translated stream inter-frame p99 ≤ passthrough of the same upstream route + 0.1 ms',
      measured: `${num(gapOwn.median, 3)} ms (against the OpenAI route: ${num(gapDelta.median, 3)} ms)`,
      ok: Number.isFinite(gapOwn.median) ? gapOwn.median <= 0.1 : undefined,
    },
    {
      target: 'Responses → Gemini non-stream added p50 at c=1 ≤ 1.3× Responses passthrough’s',
      measured: ratio(responsesRatio.median),
      ok: Number.isFinite(responsesRatio.median) ? responsesRatio.median <= 1.3 : undefined,
    },
    {
      target: 'Responses → Gemini stream inter-frame p99 ≤ passthrough of the same upstream route + 0.1 ms',
      measured: `${num(responsesGapOwn.median, 3)} ms`,
      ok: Number.isFinite(responsesGapOwn.median) ? responsesGapOwn.median <= 0.1 : undefined,
    },
    {
      target: 'Azure translated (Gemini client) added p50 at c=1 ≤ 1.3× the same client passthrough to the Gemini API',
      measured: ratio(azureRatio.median),
      ok: Number.isFinite(azureRatio.median) ? azureRatio.median <= 1.3 : undefined,
    },
    ...messagesPart.verdicts,
  ]
  const text = section(
    `12. Translation: chat, Responses and Messages clients on models of another format against passthrough (same gateway, interleaved rounds; median of ${ctx.cfg.rounds} round(s), min–max)`,
    [
      `Added p50 = gateway p50 − the mock's p50 for the body it receives (for a translated call, the body the gateway sends that route: generate-content, or chat completions for Messages on gpt-4o-mini; for embeddings, the same body on the mock's /v1/embeddings), ${ctx.cfg.latencyCount} requests each per round, one of each call in turn. req/s at c=${ctx.cfg.connections}. Streams: 64 deltas of 10 bytes, one every ${ctx.cfg.sseFrameGapMs} ms, ${ctx.cfg.sseStreams} of each kind per round, one of each in turn (${ctx.cfg.sseRounds} round(s)); frames/stream counts data frames, [DONE] included (a Responses or Messages stream's frames are its typed events, opening and closing ones included, and Messages' \`ping\`). Messages calls send \`x-api-key\`, \`anthropic-version: 2023-06-01\` and \`max_tokens: 1024\`; their passthrough's baseline is the mock's own /v1/messages.`,
    ],
    `${table(
      ['call', 'added p50 ms c=1', 'req/s c=32', 'failed', 'stream TTFT ms', 'inter-frame p99 ms', 'frames/stream'],
      [
        row('passthrough (gpt-4o-mini)', pass, added.pass),
        row(`translated (${MODEL})`, trans, added.trans),
        row(`Gemini client, same model (no translation)`, gemini, added.gemini),
        row('embeddings passthrough (gpt-4o-mini, POST /v1/embeddings)', embeddings, added.embeddings),
        row('chat client on an Azure upstream (gpt-azure, passthrough)', azurePass, added.azurePass),
        row('Gemini client on an Azure upstream (gpt-azure, translated)', azure, added.azure),
        row('Responses passthrough (gpt-4o-mini)', responses, added.responses),
        row(`Responses translated (${MODEL})`, responsesGemini, added.responsesGemini),
        ...messagesPart.rows.map(([label, k]) => row(label, got[k], added[k])),
      ],
    )}\n\n${table(
      ['ratio / difference (per round, then median)', 'value'],
      [
        ['translated ÷ passthrough added p50', spread(addedRatio)],
        ['translated − Gemini client added p50 ms (the translation itself)', spread(translationOwn, 3)],
        ['translated ÷ passthrough req/s', spread(rpsRatio)],
        ['translated − passthrough inter-frame p99 ms', spread(gapDelta, 3)],
        ['translated − Gemini client inter-frame p99 ms (same upstream route)', spread(gapOwn, 3)],
        ['Responses translated ÷ Responses passthrough added p50', spread(responsesRatio)],
        ['Azure translated (Gemini client) ÷ Gemini client passthrough added p50', spread(azureRatio)],
        ['Responses translated − Gemini client inter-frame p99 ms (same upstream route)', spread(responsesGapOwn, 3)],
        ...messagesPart.ratios,
      ],
    )}\n\n${verdictTable(verdicts)}`,
  )
  return {
    added,
    addedRatio,
    azureRatio,
    translationOwn,
    rpsRatio,
    gapDelta,
    responsesRatio,
    responsesGapOwn,
    messages: messagesPart,
    verdicts,
    text,
  }
}
