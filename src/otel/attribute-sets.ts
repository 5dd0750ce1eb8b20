import type { Attributes } from '@opentelemetry/api'

/** Past this many distinct sets (model ids are configured, so it is never reached in practice), sets are not kept. */
const MAX_SETS = 10_000

/**
 * The attribute sets of GenAI measurements, each built once: every call of one shape hands the SDK the same object,
 * instead of spreading a new one per record (a measurable share of the per-call cost).
 */
export class AttributeSets {
  readonly #sets = new Map<string, Attributes>()

  /** `gen_ai.response.model` is set only without `errorType`, which replaces it; `tokenType` only for token usage. */
  of(
    operation: string,
    provider: string,
    requestModel: string,
    responseModel?: string,
    errorType?: string,
    tokenType?: string,
  ): Attributes {
    const key = `${operation}\n${provider}\n${requestModel}\n${responseModel ?? ''}\n${errorType ?? ''}\n${tokenType ?? ''}`
    let set = this.#sets.get(key)
    if (set !== undefined) return set
    set = { 'gen_ai.operation.name': operation, 'gen_ai.provider.name': provider, 'gen_ai.request.model': requestModel }
    if (errorType !== undefined) set['error.type'] = errorType
    else if (responseModel !== undefined) set['gen_ai.response.model'] = responseModel
    if (tokenType !== undefined) set['gen_ai.token.type'] = tokenType
    if (this.#sets.size < MAX_SETS) this.#sets.set(key, set)
    return set
  }
}
