// The checks of a request body's fields that more than one dialect's validators make, written once: the same field
// refused alike, with the same message, whichever API the client speaks.
import { invalidField as invalid } from '../errors.js'

/** Refuses `body[field]` unless it is absent, null, or a finite number from `min` to `max`. */
export function numberIn(body: Record<string, unknown>, field: string, min: number, max: number): void {
  const value = body[field]
  if (value === undefined || value === null) return
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    invalid(field, `'${field}' must be a number from ${min} to ${max}.`)
  }
}

/** Refuses `body[field]` unless it is absent, null, or an integer of at least 1. */
export function positiveInteger(body: Record<string, unknown>, field: string): void {
  const value = body[field]
  if (value === undefined || value === null) return
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    invalid(field, `'${field}' must be an integer of at least 1.`)
  }
}

/** The body's `model`, which must be a non-empty string. */
export function requiredModel(body: Record<string, unknown>): string {
  if (typeof body.model !== 'string' || body.model === '') invalid('model', "'model' is required and must be a string.")
  return body.model
}

/** Whether the body asks to stream: `stream` absent, null or a boolean, refused otherwise. */
export function streamFlag(body: Record<string, unknown>): boolean {
  const stream = body.stream
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') invalid('stream', "'stream' must be a boolean.")
  return stream === true
}
