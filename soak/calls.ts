// The soak's client calls: real SDKs against one gateway process, each call marked in its prompt so that the upstream
// tap can count what it cost. A call may be cut by its client (an abort at a random point), as a network would.
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'

/** The kinds of call the soak makes. */
export const KINDS = ['whole', 'stream', 'keyed', 'retried', 'anthropic', 'gemini', 'background'] as const
export type Kind = (typeof KINDS)[number]

/** How one call ended, as its client saw it. */
export interface Outcome {
  marker: string
  kind: Kind
  owner: string
  /** The gateway processes (by instance number) it was sent to. */
  instances: number[]
  /** A whole answer reached the client (on the last attempt, for a repeated call). */
  answered: boolean
  /** The client cut it on purpose (at least one attempt). */
  cut: boolean
  /** The last error the client saw, when it got no answer and did not cut. */
  error?: string
  /** The error the repeat of a key got after its first attempt was answered (the answer reached the client). */
  repeatError?: string
  /** A background response's id. */
  backgroundId?: string
  /** A process it was sent to was killed while it ran: what it cost is counted apart. */
  killed?: boolean
  /** When it started and ended (ms since the epoch). */
  startedAt: number
  endedAt?: number
  /** When each of its cuts fired (ms since the epoch, to the microsecond: `preciseNow`). */
  cutsAt: number[]
}

/** Where and how one attempt is sent. */
export interface Target {
  url: string
  key: string
  /** Abort after this many ms (a cut), or never. */
  cutAfterMs: number | undefined
  /** Told when the cut fires, with `preciseNow()`. */
  onCut?: (at: number) => void
}

/** Ms since the epoch to the microsecond: the soak's processes share the machine's clock. */
export const preciseNow = () => performance.timeOrigin + performance.now()

/** The header each call carries its marker in: a gateway process reports what became of the answer it sent. */
export const MARKER_HEADER = 'x-soak-marker'

const prompt = (marker: string) => `Say something about ${marker}.`

/** The error a cut attempt ends with, whatever the SDK made of the abort. */
export class CutError extends Error {
  override name = 'AbortError'
}

/**
 * Runs one attempt, cut after `cutAfterMs`. `run` resolves only with the whole answer in hand (each checks its end:
 * a message, a stop or finish reason), so a cut that came after that took nothing from the client; one that came
 * before is a cut whatever the SDK made of it (the OpenAI SDK ends a stream it was iterating without an error when
 * its signal aborts: `chatCall` throws then).
 */
export function withCut<T>({ cutAfterMs, onCut }: Target, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const cut = () => {
    onCut?.(preciseNow())
    controller.abort()
  }
  const timer = cutAfterMs === undefined ? undefined : setTimeout(cut, cutAfterMs)
  return run(controller.signal)
    .catch((error: unknown) => {
      if (controller.signal.aborted && !isCut(error)) throw new CutError(`cut after ${cutAfterMs} ms`)
      throw error
    })
    .finally(() => clearTimeout(timer))
}

const openai = (target: Target) => new OpenAI({ apiKey: target.key, baseURL: `${target.url}/v1`, maxRetries: 0, timeout: 60_000 })

/** One OpenAI chat call, whole or streamed and read to its end; `headers` adds a key or a retry count. */
export function chatCall(target: Target, marker: string, stream: boolean, extra: Record<string, string> = {}): Promise<void> {
  return withCut(target, async (signal) => {
    const client = openai(target)
    const headers = { ...extra, [MARKER_HEADER]: marker }
    const messages = [{ role: 'user' as const, content: prompt(marker) }]
    if (!stream) {
      const done = await client.chat.completions.create({ model: 'gpt-4o-mini', messages }, { signal, headers })
      if (!done.choices[0]?.message) throw new Error('no message')
      return
    }
    const events = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }, { signal, headers })
    let finished = false
    for await (const event of events) if (event.choices[0]?.finish_reason) finished = true
    if (!finished) throw signal.aborted ? new CutError('cut before the stream finished') : new Error('stream ended without a finish reason')
  })
}

/** One Anthropic Messages call (translated to the OpenAI upstream), whole or streamed. */
export function anthropicCall(target: Target, marker: string, stream: boolean): Promise<void> {
  return withCut(target, async (signal) => {
    const client = new Anthropic({ apiKey: target.key, baseURL: target.url, maxRetries: 0, timeout: 60_000 })
    const headers = { [MARKER_HEADER]: marker }
    const params = { model: 'gpt-4o-mini', max_tokens: 256, messages: [{ role: 'user' as const, content: prompt(marker) }] }
    if (!stream) {
      const done = await client.messages.create(params, { signal, headers })
      if (!done.stop_reason) throw new Error('no stop reason')
      return
    }
    const events = client.messages.stream(params, { signal, headers })
    const done = await events.finalMessage()
    if (!done.stop_reason) throw new Error('no stop reason')
  })
}

/** One Gemini generate-content call through the Google GenAI SDK. */
export function geminiCall(target: Target, marker: string): Promise<void> {
  return withCut(target, async (signal) => {
    const client = new GoogleGenAI({ apiKey: target.key, httpOptions: { baseUrl: target.url, headers: { [MARKER_HEADER]: marker } } })
    const done = await client.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: prompt(marker),
      config: { abortSignal: signal },
    })
    if (!done.candidates?.[0]?.finishReason) throw new Error('no finish reason')
  })
}

/** Creates a background response; resolves its id. */
export async function backgroundCreate(target: Target, marker: string): Promise<string> {
  const response = await openai(target).responses.create({ model: 'gpt-4o-mini', input: prompt(marker), background: true })
  return response.id
}

/** A background response's state: its status, or undefined when it cannot be read now. */
export async function backgroundStatus(target: Target, id: string): Promise<string | undefined> {
  try {
    return (await openai(target).responses.retrieve(id)).status ?? undefined
  } catch {
    return undefined
  }
}

/** Whether an error is the client's own cut. */
export const isCut = (error: unknown) =>
  error instanceof Error && (error.name === 'AbortError' || /abort/i.test(error.message) || error.constructor.name.includes('Abort'))
