// A stream assembled into the answer its format gives without streaming: what a recovery record of a stream keeps,
// so a client that lost the stream reads the same shape it would have got from a non-streaming call.

import { isObject } from '../json/value.js'
import type { CallPlan, ClientFormat, UpstreamFormat } from './format.js'
import type { HubChoice, HubPart, HubResponse, HubStreamEvent } from './hub.js'

interface ToolCallDraft {
  id: string
  name: string
  args: string
  signature: string | undefined
}

interface ChoiceDraft {
  parts: HubPart[]
  calls: ToolCallDraft[]
  finish: HubChoice['finish']
}

/** Collects hub stream events into a whole hub answer. */
class AnswerDraft {
  readonly #choices = new Map<number, ChoiceDraft>()
  readonly #response: HubResponse = {
    id: undefined,
    model: undefined,
    created: undefined,
    choices: [],
    usage: undefined,
    blocked: undefined,
  }

  #choice(index: number): ChoiceDraft {
    let choice = this.#choices.get(index)
    if (!choice) {
      choice = { parts: [], calls: [], finish: undefined }
      this.#choices.set(index, choice)
    }
    return choice
  }

  add(event: HubStreamEvent): void {
    switch (event.type) {
      case 'meta':
        this.#response.id ??= event.id
        this.#response.model ??= event.model
        this.#response.created ??= event.created
        return
      case 'text':
      case 'refusal': {
        const parts = this.#choice(event.choice).parts
        const last = parts.at(-1)
        // Consecutive pieces of the same kind are one part, as a whole answer has them.
        if (last?.type === event.type) last.text += event.text
        else parts.push({ type: event.type, text: event.text })
        return
      }
      case 'reasoning': {
        const parts = this.#choice(event.choice).parts
        const last = parts.at(-1)
        // A signature closes its part: reasoning after it is a part of its own, as in a whole answer.
        if (last?.type === 'reasoning' && last.signature === '' && !last.redacted) {
          last.text += event.text
          if (event.signature !== undefined) last.signature = event.signature
        } else parts.push({ type: 'reasoning', text: event.text, signature: event.signature ?? '', redacted: event.redacted })
        return
      }
      case 'tool_call': {
        const calls = this.#choice(event.choice).calls
        let call = calls[event.index]
        if (!call) {
          call = { id: '', name: '', args: '', signature: undefined }
          calls[event.index] = call
        }
        if (event.id !== undefined) call.id = event.id
        if (event.name !== undefined) call.name = event.name
        call.signature ??= event.signature
        call.args += event.args
        return
      }
      case 'finish':
        this.#choice(event.choice).finish = event.finish
        return
      case 'usage':
        this.#response.usage = event.usage
        return
      case 'error':
        return
    }
  }

  answer(): HubResponse {
    const indexes = [...this.#choices.keys()].sort((a, b) => a - b)
    this.#response.choices = indexes.map((index) => {
      const draft = this.#choices.get(index) as ChoiceDraft
      const calls: HubPart[] = draft.calls.flatMap((call) =>
        call ? [{ type: 'tool_call' as const, id: call.id, name: call.name, args: parsedArgs(call.args), signature: call.signature }] : [],
      )
      return { index, parts: [...draft.parts, ...calls], finish: draft.finish }
    })
    return this.#response
  }
}

/** A tool call's arguments; a stream cut inside them keeps what came, under `_partial`. */
function parsedArgs(text: string): Record<string, unknown> {
  if (text.trim() === '') return {}
  try {
    const value: unknown = JSON.parse(text)
    return isObject(value) ? value : { value }
  } catch {
    return { _partial: text }
  }
}

/**
 * Event data assembled between two turns of the event loop: a stream of tens of megabytes assembled at once stalled
 * every other request for most of a second.
 */
export const ASSEMBLE_SLICE_BYTES = 1024 * 1024

/** Calls `visit` with each of `data` in order, with a turn of the event loop after each `ASSEMBLE_SLICE_BYTES`. */
export async function forEachInSlices(data: readonly string[], visit: (payload: string) => void): Promise<void> {
  let sinceTurn = 0
  for (const payload of data) {
    visit(payload)
    sinceTurn += payload.length
    if (sinceTurn >= ASSEMBLE_SLICE_BYTES) {
      sinceTurn = 0
      await new Promise(setImmediate)
    }
  }
}

/** `assembleStream` with a turn of the event loop after each `ASSEMBLE_SLICE_BYTES` of event data. */
export async function assembleStreamInSlices(
  reader: UpstreamFormat,
  writer: ClientFormat,
  data: readonly string[],
  plan: CallPlan,
): Promise<object> {
  const decoder = reader.streamDecoder(plan)
  const draft = new AnswerDraft()
  await forEachInSlices(data, (payload) => {
    for (const event of decoder.event(payload)) draft.add(event)
  })
  return writer.responseFromHub(draft.answer(), { ...plan, stream: false })
}

/** The events of a stream (their SSE `data`) read by `reader`, assembled into `writer`'s non-streaming answer. */
export function assembleStream(reader: UpstreamFormat, writer: ClientFormat, data: readonly string[], plan: CallPlan): object {
  const decoder = reader.streamDecoder(plan)
  const draft = new AnswerDraft()
  for (const payload of data) for (const event of decoder.event(payload)) draft.add(event)
  return writer.responseFromHub(draft.answer(), { ...plan, stream: false })
}
