import type { CallTarget, OperationFormat } from '../dialects/index.js'
import type { Exchange } from '../http/dispatch.js'
import type { Runtime } from '../runtime.js'
import { serveModelCall } from './model-call.js'

/**
 * `POST /v1/embeddings`, and `POST …/models/{model}:embedContent` and `:batchEmbedContents`: passthrough to a
 * model of the client's format (the format refuses a model of the other one), kept when its client left.
 */
export function embeddingsHandler(rt: Runtime): (ex: Exchange, format: OperationFormat, target: CallTarget | undefined) => Promise<void> {
  return (ex, format, target) => serveModelCall(rt, ex, format, target)
}
