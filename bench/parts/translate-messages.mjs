// Part 12's Messages rows: an Anthropic Messages client (`POST /v1/messages` with `x-api-key` and
// `anthropic-version: 2023-06-01`, as Claude Code sends them) on the bench gateway's Claude model (byte-exact
// passthrough), its OpenAI model (translated to chat completions) and its Gemini model (translated to
// generate-content). The bodies, the mock's own baseline for each, and the ratios and verdicts read from what
// translate.mjs measured; translate.mjs runs them in its interleaved rounds beside the chat and Responses calls.
import { SMALL_BODY, STREAM_BODY } from '../lib/bodies.mjs'
import { num, ratio, spread } from '../lib/report.mjs'
import { summary } from '../lib/stats.mjs'

/** The bench gateway's model on its Anthropic upstream (bench/server.mjs). */
export const CLAUDE_MODEL = 'claude-sonnet-4-5'
const OPENAI_MODEL = 'gpt-4o-mini'
const GEMINI_MODEL = 'gemini-2.5-flash'
// Messages requires max_tokens, so the bodies carry it and each baseline carries what the gateway turns it into.
const MAX_TOKENS = 1024

/** The Messages kinds, in the order of the part's rows: passthrough, then translated to OpenAI and to Gemini. */
export const MESSAGES_KINDS = ['messages', 'messagesOpenai', 'messagesGemini']

const small = JSON.parse(SMALL_BODY)
const [system, user] = small.messages

/** SMALL_BODY as a Messages client sends it: the system prompt apart, one user message, temperature, max_tokens. */
const messagesBody = (model) =>
  JSON.stringify({ model, system: system.content, messages: [user], temperature: small.temperature, max_tokens: MAX_TOKENS })

/** STREAM_BODY as a Messages client sends it. */
const messagesStreamBody = (model) =>
  JSON.stringify({ model, messages: JSON.parse(STREAM_BODY).messages, max_tokens: MAX_TOKENS, stream: true })

// The translated calls' baselines are the very bodies the gateway sends the mock, so "added" is the gateway's own time.
const CHAT_BODY = JSON.stringify({ ...small, max_completion_tokens: MAX_TOKENS })
const GEMINI_BODY = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: user.content }] }],
  systemInstruction: { parts: [{ text: system.content }] },
  generationConfig: { temperature: small.temperature, maxOutputTokens: MAX_TOKENS },
})

/**
 * Each Messages kind: where the gateway is called (`at`) and with what (`body`, `streamBody`), and the mock's own
 * endpoint for the body the gateway sends it (`direct`, `directBody`). The mock's Messages API wants the version
 * header as Anthropic's does; it takes any key.
 * @param {{ gateway: import('../lib/load.mjs').Target, mockUrl: string, key: string }} options
 */
export function messagesCalls({ gateway, mockUrl, key }) {
  const json = { 'content-type': 'application/json' }
  const headers = { ...json, 'anthropic-version': '2023-06-01', 'x-api-key': key }
  const at = { origin: gateway.origin, path: '/v1/messages', headers }
  const call = (model, direct, directBody) => ({
    at,
    body: messagesBody(model),
    streamBody: messagesStreamBody(model),
    direct: { origin: mockUrl, headers: json, ...direct },
    directBody,
  })
  return {
    messages: call(CLAUDE_MODEL, { path: '/v1/messages', headers }, messagesBody(CLAUDE_MODEL)),
    messagesOpenai: call(OPENAI_MODEL, { path: '/v1/chat/completions' }, CHAT_BODY),
    messagesGemini: call(GEMINI_MODEL, { path: `/v1beta/models/${GEMINI_MODEL}:generateContent` }, GEMINI_BODY),
  }
}

/** Whether a Messages stream ended as Anthropic's do, with `message_stop` (an error event has no other tell). */
export const messagesStreamEnded = (stream) => stream.lastFrame.includes('"type":"message_stop"')

/** Per round a ÷ b (or a − b), then their median and spread. @param {number[]} a @param {number[]} b */
const perRound = (a, b, op) => summary(a.map((v, r) => op(v, b[r])))
const div = (x, y) => x / y
const minus = (x, y) => x - y

/**
 * The Messages rows of the part's tables, from what was measured per kind (`added50`, `rps`, `gap99` per round).
 * `passthrough` is the chat client on the OpenAI model and `gemini` the Gemini client on the Gemini model: each
 * translated stream is judged against its own upstream route untranslated, as the part's other translated streams.
 * @param {Record<string, { added50: number[], rps: number[], gap99: number[] }>} got
 */
export function messagesReport(got) {
  const { messages: pass, messagesOpenai: toOpenai, messagesGemini: toGemini, passthrough: chat, gemini } = got
  const added = {
    openai: perRound(toOpenai.added50, pass.added50, div),
    gemini: perRound(toGemini.added50, pass.added50, div),
  }
  const gapOwn = { openai: perRound(toOpenai.gap99, chat.gap99, minus), gemini: perRound(toGemini.gap99, gemini.gap99, minus) }
  const gapVsPass = { openai: perRound(toOpenai.gap99, pass.gap99, minus), gemini: perRound(toGemini.gap99, pass.gap99, minus) }
  const anthropicVsOpenai = {
    added: perRound(pass.added50, chat.added50, div),
    rps: perRound(pass.rps, chat.rps, div),
    gap: perRound(pass.gap99, chat.gap99, minus),
  }
  const rows = [
    [`Messages passthrough (${CLAUDE_MODEL})`, 'messages'],
    [`Messages translated (${OPENAI_MODEL}, to chat completions)`, 'messagesOpenai'],
    [`Messages translated (${GEMINI_MODEL}, to generate-content)`, 'messagesGemini'],
  ]
  const ratios = [
    ['Messages → OpenAI ÷ Messages passthrough added p50', spread(added.openai)],
    ['Messages → Gemini ÷ Messages passthrough added p50', spread(added.gemini)],
    [
      'Messages → OpenAI − chat passthrough added p50 ms (the translation itself)',
      spread(perRound(toOpenai.added50, chat.added50, minus), 3),
    ],
    [
      'Messages → Gemini − Gemini client added p50 ms (the translation itself)',
      spread(perRound(toGemini.added50, gemini.added50, minus), 3),
    ],
    ['Messages → OpenAI ÷ Messages passthrough req/s', spread(perRound(toOpenai.rps, pass.rps, div))],
    ['Messages → Gemini ÷ Messages passthrough req/s', spread(perRound(toGemini.rps, pass.rps, div))],
    ['Messages → OpenAI − chat passthrough inter-frame p99 ms (same upstream route)', spread(gapOwn.openai, 3)],
    ['Messages → Gemini − Gemini client inter-frame p99 ms (same upstream route)', spread(gapOwn.gemini, 3)],
    ['Messages → OpenAI − Messages passthrough inter-frame p99 ms', spread(gapVsPass.openai, 3)],
    ['Messages → Gemini − Messages passthrough inter-frame p99 ms', spread(gapVsPass.gemini, 3)],
    ['Anthropic passthrough ÷ OpenAI passthrough added p50 (Messages on the Claude model ÷ chat)', spread(anthropicVsOpenai.added)],
    ['Anthropic passthrough ÷ OpenAI passthrough req/s', spread(anthropicVsOpenai.rps)],
    ['Anthropic passthrough − OpenAI passthrough inter-frame p99 ms', spread(anthropicVsOpenai.gap, 3)],
  ]
  const addedVerdict = (name, s) => ({
    target: `Messages → ${name} non-stream added p50 at c=1 ≤ 1.3× Messages passthrough’s`,
    measured: ratio(s.median),
    ok: Number.isFinite(s.median) ? s.median <= 1.3 : undefined,
  })
  const gapVerdict = (name, own, vsPass) => ({
    target: `Messages → ${name} stream inter-frame p99 ≤ passthrough of the same upstream route + 0.1 ms`,
    measured: `${num(own.median, 3)} ms (against the Messages passthrough: ${num(vsPass.median, 3)} ms)`,
    ok: Number.isFinite(own.median) ? own.median <= 0.1 : undefined,
  })
  const verdicts = [
    addedVerdict('OpenAI', added.openai),
    addedVerdict('Gemini', added.gemini),
    gapVerdict('OpenAI', gapOwn.openai, gapVsPass.openai),
    gapVerdict('Gemini', gapOwn.gemini, gapVsPass.gemini),
  ]
  return { rows, ratios, verdicts, added, gapOwn, gapVsPass, anthropicVsOpenai }
}
