import { type CallTarget, generateContent, validateGeminiAlt } from '../dialects/index.js'
import type { Exchange } from '../http/dispatch.js'
import type { Runtime } from '../runtime.js'
import { serveModelCall } from './model-call.js'

/** `POST …/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`. */
export function generateContentHandler(rt: Runtime): (ex: Exchange, target: CallTarget) => Promise<void> {
  return async (ex, target) => {
    validateGeminiAlt(target.stream, ex.match.query.get('alt'))
    return await serveModelCall(rt, ex, generateContent, target)
  }
}
