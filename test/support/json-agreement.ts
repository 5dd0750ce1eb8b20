// Agreement checks: the scanner against JSON.parse followed by validation.

import { expect } from 'vitest'
import { validateGenerateContent } from '../../src/dialects/gemini/validate.js'
import { chatCompletions } from '../../src/dialects/openai/index.js'
import { validateChat } from '../../src/dialects/openai/validate.js'
import { GatewayError } from '../../src/errors.js'
import { BIG_STRING, type ScanOptions, scanJsonObject } from '../../src/json/scan-body.js'

/** Scans as the chat route does: elements of big arrays summed up by the members chat validation reads. */
export function scanChat(bytes: Buffer, options?: ScanOptions): Promise<Record<string, unknown>> {
  return scanJsonObject(bytes, { ...options, elementFields: chatCompletions.elementFields })
}

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; param: string | undefined; message: string }

function outcomeOf(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() }
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    return { ok: false, code: error.code, param: error.param, message: error.message }
  }
}

async function scanOutcome(bytes: Buffer, options?: { sliceBytes?: number; smallValueBytes?: number }): Promise<Outcome> {
  try {
    return { ok: true, value: await scanChat(bytes, options) }
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    return { ok: false, code: error.code, param: error.param, message: error.message }
  }
}

/** JSON text that tells -0 from 0 and keeps key order. */
export function exact(value: unknown): string {
  return JSON.stringify(value, (_key, x: unknown) => (Object.is(x, -0) ? '<-0>' : x))
}

/** What the checks met so far, so a corpus test can show it reached every branch that matters. */
export const outcomes = { chatPass: 0, geminiPass: 0, params: new Set<string>(), skeletons: 0, bigStrings: 0, rejected: 0, notObject: 0 }

/** Validation of the skeleton gives what validation of the parsed value gives (the model aside, when it is big). */
export function sameValidation(skeleton: Record<string, unknown>, parsed: Record<string, unknown>, label: string): void {
  const chatParsed = outcomeOf(() => validateChat(parsed))
  const chatSkeleton = outcomeOf(() => validateChat(skeleton))
  if (chatParsed.ok && chatSkeleton.ok) {
    const a = chatParsed.value as { model: string; stream: boolean }
    const b = chatSkeleton.value as { model: string; stream: boolean }
    expect(b.stream, label).toBe(a.stream)
    if (b.model === BIG_STRING) {
      // The one value a skeleton cannot give back: a model name bigger than smallValueBytes.
      expect(a.model.length, label).toBeGreaterThan(0)
      outcomes.bigStrings++
    } else {
      expect(b.model, label).toBe(a.model)
    }
    outcomes.chatPass++
  } else {
    expect(chatSkeleton, label).toEqual(chatParsed)
    if (!chatParsed.ok) outcomes.params.add(String(chatParsed.param).replace(/\[\d+\]/, '[i]'))
  }
  const geminiParsed = outcomeOf(() => validateGenerateContent(parsed))
  expect(
    outcomeOf(() => validateGenerateContent(skeleton)),
    label,
  ).toEqual(geminiParsed)
  if (geminiParsed.ok) outcomes.geminiPass++
  else outcomes.params.add(String(geminiParsed.param).replace(/\[\d+\]/, '[i]'))
}

/** Scanning `bytes` agrees with JSON.parse: same rejection, or a skeleton that validates the same, in any slicing. */
export async function checkDocument(bytes: Buffer): Promise<void> {
  const label = JSON.stringify(bytes.toString('latin1').slice(0, 400))
  let parsed: unknown
  let valid = true
  try {
    parsed = JSON.parse(bytes.toString('utf8'))
  } catch {
    valid = false
  }
  // Slices of 7 bytes put a boundary inside every token and multi-byte character sooner or later.
  const tiny = await scanOutcome(bytes, { sliceBytes: 7, smallValueBytes: 8 })
  if (!valid) {
    outcomes.rejected++
    expect(tiny.ok, label).toBe(false)
    if (tiny.ok) return
    expect(tiny.code, label).toBe('invalid_request')
    expect(tiny.message, label).toMatch(/^The request body is not valid JSON: .+ at byte \d+\.$/)
    const offset = Number(/at byte (\d+)\.$/.exec(tiny.message)?.[1])
    expect(offset, label).toBeLessThanOrEqual(bytes.length)
    // The slicing does not change the answer.
    expect(await scanOutcome(bytes), label).toEqual(tiny)
    return
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    outcomes.notObject++
    expect(tiny, label).toEqual({
      ok: false,
      code: 'invalid_request',
      param: undefined,
      message: 'The request body must be a JSON object.',
    })
    return
  }
  const object = parsed as Record<string, unknown>
  expect(tiny.ok, label).toBe(true)
  if (!tiny.ok) return
  outcomes.skeletons++
  sameValidation(tiny.value as Record<string, unknown>, object, label)
  // With nothing big, the skeleton is the parsed value (key order, -0 and own '__proto__' included).
  const whole = (await scanChat(bytes, { sliceBytes: 7, smallValueBytes: 1e9 })) as Record<string, unknown>
  expect(whole, label).toEqual(object)
  expect(exact(whole), label).toBe(exact(object))
  expect(Object.getPrototypeOf(whole), label).toBe(Object.prototype)
  const defaults = (await scanChat(bytes)) as Record<string, unknown>
  expect(exact(defaults), label).toBe(exact(object))
  sameValidation(await scanChat(bytes, { smallValueBytes: 0 }), object, label)
  sameValidation(await scanChat(bytes, { sliceBytes: 3, smallValueBytes: 40 }), object, label)
}
