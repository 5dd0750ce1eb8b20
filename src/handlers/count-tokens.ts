import { type CallTarget, countTokens } from '../dialects/index.js'
import type { Exchange } from '../http/dispatch.js'
import type { Runtime } from '../runtime.js'
import { serveModelCall } from './model-call.js'

/**
 * `POST …/models/{model}:countTokens`: passthrough to a model of a Gemini upstream. It is a model call like the
 * others (keys, fallbacks, usage events), but free upstream: an answer its client left is not kept.
 */
export function countTokensHandler(rt: Runtime): (ex: Exchange, target: CallTarget) => Promise<void> {
  return (ex, target) => serveModelCall(rt, ex, countTokens, target)
}
