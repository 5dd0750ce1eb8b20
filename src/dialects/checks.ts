// The checks of a request body's fields that more than one dialect's validators make, written once: the same field
// refused alike, with the same message, whichever API the client speaks. A member's type and range are its payload's
// (each field's reader in the dialect's wire.ts, which translation reads it with too): checked here by that reader.
import { invalidField as invalid } from '../errors.js'
import type { Payload } from '../translate/payload.js'
import { Refusal } from '../translate/readers.js'

/** A check of some members of a client's body with their payload's readers (`memberCheck`). */
export type MemberCheck = (body: Record<string, unknown>) => void

/**
 * Checks members `keys` of a client's body with their readers in `payload`: a refusal is the client's 400. The
 * required ones are read first, in order; the optional ones as the body's own members are walked, in its order, since
 * a look-up of an absent member costs as much as one of a present one and a body sets few of those checked.
 */
export function memberCheck<V>(payload: Payload<V>, keys: readonly (keyof V & string)[]): MemberCheck {
  const required = keys.filter((key) => payload.fields[key].required)
  const optional: ReadonlySet<string> = new Set(keys.filter((key) => !payload.fields[key].required))
  return (body) => {
    try {
      for (const key of required) payload.read(body, key)
      for (const key in body) if (optional.has(key)) payload.read(body, key as keyof V & string)
    } catch (error) {
      if (error instanceof Refusal) invalid(error.field, error.message)
      throw error
    }
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
