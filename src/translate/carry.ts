// Reasoning a client of another format carries back. A model's reasoning and signatures are opaque tokens only its
// own provider reads, and each client format sends back just what it has a field for (Anthropic's
// `thinking.signature`, Responses' `reasoning.encrypted_content`, a Gemini part's `thoughtSignature`, a chat tool
// call's `extra_content`). So a token another format cannot hold is packed into the one such field the client's
// format has, and unpacked when the client sends it back: a Gemini tool loop survives an Anthropic client, an
// Anthropic one a Gemini or Responses client.
import { isObject } from '../json/value.js'
import type { HubReasoningPart, HubStreamEvent } from './hub.js'

/** What one packed token holds: reasoning parts, in order, and the signature of the tool call that follows them. */
export interface Carried {
  reasoning: HubReasoningPart[]
  signature: string | undefined
}

/**
 * The packed token starts with these bytes, three of them so its base64 text starts the same way: it stays valid
 * base64, which clients that decode Gemini's `thoughtSignature` as bytes require.
 */
const MAGIC = Buffer.from('mg\u0001')
const MAGIC_TEXT = MAGIC.toString('base64')

/** Packs reasoning and a tool call's signature into one opaque token. */
export function carry(carried: Carried): string {
  const reasoning = carried.reasoning.map((part) => [part.text, part.signature, part.redacted ? 1 : 0])
  const json = JSON.stringify(carried.signature === undefined ? { r: reasoning } : { r: reasoning, s: carried.signature })
  return Buffer.concat([MAGIC, Buffer.from(json, 'utf8')]).toString('base64')
}

const isEntry = (value: unknown): value is [string, string, number] =>
  Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'string' && (value[2] === 0 || value[2] === 1)

/** What a token packed by `carry` holds, or undefined for any other token (the provider's own, kept as it is). */
export function carried(token: string): Carried | undefined {
  if (!token.startsWith(MAGIC_TEXT)) return undefined
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(token, 'base64').subarray(MAGIC.length).toString('utf8'))
  } catch {
    return undefined
  }
  if (!isObject(value) || !Array.isArray(value.r) || !value.r.every(isEntry)) return undefined
  if (value.s !== undefined && typeof value.s !== 'string') return undefined
  return {
    reasoning: value.r.map(([text, signature, redacted]) => ({ type: 'reasoning', text, signature, redacted: redacted === 1 })),
    signature: value.s,
  }
}

/** A tool call's signature with the reasoning before it: the signature as it is when there is none, else both packed. */
export function carriedWith(reasoning: readonly HubReasoningPart[], signature: string | undefined): string | undefined {
  return reasoning.length === 0 ? signature : carry({ reasoning: [...reasoning], signature })
}

/** A signature as a client sent it back: what it carried when packed, else the provider's own signature and no reasoning. */
export function unpack(token: string | undefined): Carried {
  return (token === undefined ? undefined : carried(token)) ?? { reasoning: [], signature: token }
}

/** Reasoning stream events gathered into parts, held until a writer places them. */
export class PendingReasoning {
  #parts: HubReasoningPart[] = []

  /** Takes a reasoning event: its text continues the open part (an unsigned one), else opens one; a signature closes it. */
  add(event: HubStreamEvent & { type: 'reasoning' }): void {
    const last = this.#parts.at(-1)
    const open = last !== undefined && last.signature === '' && !last.redacted ? last : undefined
    const part = open ?? { type: 'reasoning', text: '', signature: '', redacted: event.redacted }
    if (!open) this.#parts.push(part)
    part.text += event.text
    if (event.signature !== undefined) part.signature = event.signature
  }

  /** Whether any reasoning is held. */
  get held(): boolean {
    return this.#parts.length > 0
  }

  /** The parts held so far, handed over and forgotten. */
  take(): HubReasoningPart[] {
    const parts = this.#parts
    this.#parts = []
    return parts
  }
}
