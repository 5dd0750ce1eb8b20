// model-gateway/client: a fetch for the SDKs that keeps a model call alive across broken connections, and a client of
// the Recoveries API for the answers kept when one was lost anyway. It runs in
// browsers, edge runtimes, Deno, Bun and Node alike: no dependencies, nothing from outside this directory.
import { backgroundBody, isResponsesCreate, sendInBackground } from './background.js'
import { BaseHealth, CallRun } from './call-run.js'
import { type RecoveringFetchOptions, resolveOptions } from './options.js'
import { modelCallOf } from './request.js'
import { sendModelCall } from './send.js'

export { findRecoveringFetchError, RecoveringFetchError, type RecoveringFetchErrorDetails } from './errors.js'
export type { RecoveringFetchEvent, RecoveringFetchOptions, RecoveringFetchStep } from './options.js'
export { createRecoveriesClient, type RecoveriesClient, type RecoveriesClientOptions, RecoveriesError } from './recoveries-client.js'
export type {
  RecoveredAnswer,
  RecoveryDeleteAllResult,
  RecoveryDeleteResult,
  RecoveryList,
  RecoveryListParams,
  RecoveryRecord,
  RecoverySummary,
} from './recovery-types.js'

/** The function `createRecoveringFetch` returns: called like `fetch`. */
export type RecoveringFetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>

/**
 * A `fetch` for the OpenAI, Google GenAI and Vercel AI SDKs that never loses a model call to a broken connection and
 * never pays for one twice. Model calls (POST `…/chat/completions`, `…/responses`, `…:generateContent`,
 * `…:streamGenerateContent` under one of `baseUrls`) get an `Idempotency-Key` and are sent again with that same key on
 * the next base URL after a network error, an attempt timeout, or a 408/409/502/503/504/52x (or a 429 with
 * `retry-after`); a stream cut half-way is resumed from the gateway's Recoveries API into the same `Response`; the app's
 * abort asks the gateway to cancel the call. With `background: true`, Responses calls run as background responses,
 * polled or streamed by id. Every other request passes through untouched.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai'
 * import { createRecoveringFetch } from 'model-gateway/client'
 *
 * const fetch = createRecoveringFetch({ baseUrls: ['https://ai.example.com', 'https://dc8.example.com'] })
 * const openai = new OpenAI({ baseURL: 'https://ai.example.com/v1', apiKey, fetch, maxRetries: 0 })
 * ```
 * @throws TypeError when an option is invalid. The returned fetch rejects with a `RecoveringFetchError` (carrying the
 *   call's `requestId` and `idempotencyKey`) when every attempt failed, and with the app's reason when it aborted.
 */
export function createRecoveringFetch(options: RecoveringFetchOptions): RecoveringFetch {
  const cfg = resolveOptions(options)
  const health = new BaseHealth(cfg.bases.length)
  return async (input, init) => {
    const call = await modelCallOf(cfg.bases, input, init)
    if (call === undefined) return cfg.fetch(input, init)
    if (cfg.background && isResponsesCreate(call.rest)) {
      const body = await backgroundBody(call.init.body)
      if (body) {
        const headers = new Headers(call.init.headers)
        headers.delete('content-length')
        const init = { ...call.init, headers, body: body.text }
        return sendInBackground(new CallRun(cfg, { ...call, init }, health), body.stream)
      }
    }
    return sendModelCall(new CallRun(cfg, call, health))
  }
}
