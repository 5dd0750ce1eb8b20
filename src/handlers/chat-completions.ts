import { chatCompletions } from '../dialects/index.js'
import type { Exchange } from '../http/dispatch.js'
import type { Runtime } from '../runtime.js'
import { serveModelCall } from './model-call.js'

/** `POST /v1/chat/completions`, JSON or `stream: true`. */
export function chatCompletionsHandler(rt: Runtime): (ex: Exchange) => Promise<void> {
  return (ex) => serveModelCall(rt, ex, chatCompletions, undefined)
}
