// A cached answer written for the call that hit it, in the client's dialect and framing, with the writers every call
// uses: a whole answer translated as any whole answer, a stream as any stream; across framings through the hub (a
// stream assembled as a kept stream is, a whole answer re-paced at once as the events of the client's stream).
import type { CallSpec } from '../call/call-spec.js'
import { answerInClientTerms } from '../call/translation.js'
import { clientFraming } from '../dialects/framing/index.js'
import { assembledAnswer } from '../dialects/index.js'
import { eventData } from '../sse/parse.js'
import { sseEvent } from '../sse/write.js'
import { assembleStream } from '../translate/assemble.js'
import type { ClientFormat, SseOut, UpstreamFormat } from '../translate/format.js'
import type { CallPlan } from '../translate/index.js'
import { answerEvents } from './answer-events.js'
import { upstreamReader } from './complete.js'
import type { CachedAnswer } from './store.js'

/** A hit as the client gets it: whole (`complete`) or as a stream's text, with its content type. */
export interface HitBody {
  stream: boolean
  contentType: string
  body: Buffer
}

const JSON_TYPE = 'application/json'

const sse = (out: SseOut): string => (typeof out === 'string' ? sseEvent(out) : sseEvent(out.data, out.event))

/** The plan a call of the client's own format is written with (a translated call has one already). */
function passthroughPlan(spec: CallSpec): CallPlan {
  return {
    model: spec.model.id,
    upstreamModel: spec.model.upstreamModel,
    stream: spec.stream,
    // The gateway asked for usage the client did not: its stream must not show it.
    includeUsage: !spec.bodies.usageAskedFor(spec.model),
    requestId: spec.requestId,
    created: Math.floor(Date.now() / 1000),
    request: spec.body.fields,
  }
}

/**
 * The cached answer in the terms of the call that hit it, or undefined when it cannot be written so (an answer the
 * client's format cannot be re-framed from): the call then goes upstream as a miss.
 */
export function hitBody(spec: CallSpec, answer: CachedAnswer): HitBody | undefined {
  const translation = spec.bodies.translationFor(spec.model)
  // The answer as it was kept, for a whole call of the client's own format: the commonest hit needs no plan.
  if (!spec.stream && answer.kind === 'whole' && !translation) return { stream: false, contentType: answer.contentType, body: answer.body }
  const plan = translation?.plan ?? passthroughPlan(spec)
  if (!spec.stream) {
    if (answer.kind === 'whole' && translation) {
      const { contentType, body } = answerInClientTerms(translation, 200, answer.body)
      return { stream: false, contentType, body }
    }
    const data = eventData(answer.body.toString('utf8'))
    const whole = translation
      ? assembledFrom(upstreamReader(spec), spec.format.hub, data, plan)
      : assembledAnswer(spec.operation, data, { ...plan, stream: false })
    return whole && { stream: false, contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(whole)) }
  }
  if (answer.kind === 'stream') {
    if (translation) {
      const stream = translation.translator.stream(plan)
      const text = stream.write(answer.body) + stream.end()
      return { stream: true, contentType: clientFraming(spec.format).contentType, body: Buffer.from(text) }
    }
    const strip = spec.bodies.usageAskedFor(spec.model) ? spec.format.askedUsage?.strip : undefined
    return { stream: true, contentType: answer.contentType, body: strip ? stripped(answer.body, strip) : answer.body }
  }
  const reader = upstreamReader(spec)
  const writer = spec.format.hub
  if (!reader || !writer) return undefined
  const events = answerEvents(reader.responseToHub(JSON.parse(answer.body.toString('utf8')), plan))
  const encoder = writer.streamEncoder({ ...plan, stream: true })
  let text = ''
  for (const out of encoder.events(events)) text += sse(out)
  for (const out of encoder.end()) text += sse(out)
  return { stream: true, contentType: clientFraming(spec.format).contentType, body: Buffer.from(text) }
}

function assembledFrom(
  reader: UpstreamFormat | undefined,
  writer: ClientFormat | undefined,
  data: readonly string[],
  plan: CallPlan,
): object | undefined {
  return reader && writer ? assembleStream(reader, writer, data, { ...plan, stream: false }) : undefined
}

/** A stream's events with the usage its client did not ask for taken out, as a live stream has it taken out. */
function stripped(body: Buffer, strip: (event: string) => string | undefined): Buffer {
  let out = ''
  for (const event of body.toString('utf8').split(/(?<=\n\r?\n)/)) out += strip(event) ?? ''
  return Buffer.from(out)
}
