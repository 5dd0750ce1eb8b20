// Whether an upstream answer is whole enough to be served again, read in the upstream's own format through the hub:
// every choice ended (a stream that stopped without its ending is cut, whatever TCP said), none in an error, and
// none stopped by its output token limit unless the cache is told to keep those.
import type { CallSpec } from '../call/call-spec.js'
import { eventData } from '../sse/parse.js'
import type { ClientFormat, UpstreamFormat } from '../translate/format.js'
import { tokenCounts } from '../translate/hub.js'
import type { CallPlan, HubFinish } from '../translate/index.js'
import type { TokenCounts } from '../types.js'
import type { CapturedAnswer } from './capture.js'

/** What the cache needs to know of an answer before it keeps it. */
export interface AnswerCheck {
  /** Whether it may be kept. */
  keep: boolean
  usage: TokenCounts | undefined
}

const REFUSED: AnswerCheck = { keep: false, usage: undefined }

/** The format the upstream's answer is written in, as `write-hit` reads it too. */
export function upstreamReader(spec: CallSpec): UpstreamFormat | undefined {
  if (spec.bodies.translationFor(spec.model)) {
    return (spec.format.counting ? spec.model.upstream.dialect.countingApi : spec.model.upstream.api)?.format
  }
  const own = spec.format.hub as (ClientFormat & Partial<UpstreamFormat>) | undefined
  return own?.responseToHub && own.streamDecoder ? (own as ClientFormat & UpstreamFormat) : undefined
}

function planFor(spec: CallSpec): CallPlan {
  return (
    spec.bodies.translationFor(spec.model)?.plan ?? {
      model: spec.model.id,
      upstreamModel: spec.model.upstreamModel,
      stream: spec.stream,
      includeUsage: true,
      requestId: spec.requestId,
      created: Math.floor(Date.now() / 1000),
      request: spec.body.fields,
    }
  )
}

const stoppedShort = (finish: HubFinish | undefined, keepLengthStops: boolean) => finish?.reason === 'length' && !keepLengthStops

/**
 * Checks an answer the call took. A format the hub cannot read (embeddings, token counts) is kept when whole and
 * 2xx: such answers have no ending to miss.
 */
export function checkAnswer(spec: CallSpec, answer: CapturedAnswer, keepLengthStops: boolean): AnswerCheck {
  if (answer.status < 200 || answer.status >= 300) return REFUSED
  // A fallback's answer is another model's: it is not what this key asks for.
  if (answer.served.model !== spec.model) return REFUSED
  const reader = upstreamReader(spec)
  const plan = planFor(spec)
  try {
    if (answer.kind === 'whole') {
      const dialect = spec.model.upstream.dialect
      const parsed: unknown = JSON.parse(answer.body.toString('utf8'))
      if (!reader) return { keep: true, usage: dialect.usage(parsed) }
      const hub = reader.responseToHub(parsed, plan)
      if (hub.choices.length === 0) return REFUSED
      for (const choice of hub.choices) if (!choice.finish || stoppedShort(choice.finish, keepLengthStops)) return REFUSED
      return { keep: true, usage: hub.usage && tokenCounts(hub.usage) }
    }
    if (!reader) return REFUSED
    const decoder = reader.streamDecoder({ ...plan, stream: true })
    let finished = 0
    let usage: TokenCounts | undefined
    for (const data of eventData(answer.body.toString('utf8'))) {
      for (const event of decoder.event(data)) {
        if (event.type === 'error') return REFUSED
        if (event.type === 'usage') usage = tokenCounts(event.usage)
        if (event.type === 'finish') {
          if (stoppedShort(event.finish, keepLengthStops)) return REFUSED
          finished++
        }
      }
    }
    return finished > 0 ? { keep: true, usage } : REFUSED
  } catch {
    // An answer the gateway cannot read is never served again.
    return REFUSED
  }
}
