import { isUtf8 } from 'node:buffer'
import type { KeptAnswer } from './recent-answers.js'

/** What the store holds for an idempotency key: claimed by a running call, or done with the answer kept. */
export type KeyState = { state: 'running'; fingerprint: string; requestId: string } | ({ state: 'done'; fingerprint: string } & KeptAnswer)

interface StoredDone {
  state: 'done'
  fingerprint: string
  requestId: string
  status: number
  contentType: string
  /** The body as text, or base64 when it is not UTF-8 (`encoding`). */
  body: string
  encoding: 'utf8' | 'base64'
}

/** The stored form of a key's state: one JSON string, so a claim and a result are one value each. */
export function encodeKeyState(state: KeyState): string {
  if (state.state === 'running') return JSON.stringify(state)
  const utf8 = isUtf8(state.body)
  const stored: StoredDone = {
    state: 'done',
    fingerprint: state.fingerprint,
    requestId: state.requestId,
    status: state.status,
    contentType: state.contentType,
    body: state.body.toString(utf8 ? 'utf8' : 'base64'),
    encoding: utf8 ? 'utf8' : 'base64',
  }
  return JSON.stringify(stored)
}

const isText = (value: unknown): value is string => typeof value === 'string'

/** A key's state read back, or undefined when the value is not one (another writer, a damaged value). */
export function decodeKeyState(text: string): KeyState | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined
  const value = parsed as { [K in keyof StoredDone]?: unknown }
  if (!isText(value.fingerprint) || !isText(value.requestId)) return undefined
  if (value.state === 'running') return { state: 'running', fingerprint: value.fingerprint, requestId: value.requestId }
  if (value.state !== 'done' || typeof value.status !== 'number' || !isText(value.contentType) || !isText(value.body)) return undefined
  return {
    state: 'done',
    fingerprint: value.fingerprint,
    requestId: value.requestId,
    status: value.status,
    contentType: value.contentType,
    body: Buffer.from(value.body, value.encoding === 'base64' ? 'base64' : 'utf8'),
  }
}
