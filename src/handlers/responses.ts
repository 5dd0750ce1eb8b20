import { responses } from '../dialects/index.js'
import type { Exchange } from '../http/dispatch.js'
import type { Runtime } from '../runtime.js'
import { serveModelCall } from './model-call.js'

/** `POST /v1/responses` (OpenAI's Responses API), JSON or `stream: true`. */
export function responsesHandler(rt: Runtime): (ex: Exchange) => Promise<void> {
  return (ex) => serveModelCall(rt, ex, responses, undefined)
}
