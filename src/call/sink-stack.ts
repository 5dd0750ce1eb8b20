import type { AskedUsage } from '../dialects/index.js'
import type { ResponseSink } from '../http/sink.js'
import type { StreamLog } from '../recovery/stream/stream-log.js'
import type { KeyRedaction } from '../upstream/redact.js'
import { askedUsageSink } from './asked-usage-sink.js'
import { redactingSink } from './redacting-sink.js'
import { endingWithError, numberingSink, watchingSink } from './stream-sinks.js'
import { tee } from './tee.js'
import { translatingSink } from './translation.js'

/** The translator of one stream, from the upstream's format into the client's. */
export type StreamTranslation = Parameters<typeof translatingSink>[1]

/** What a streamed answer is relayed to, and what it passes through on the way. */
export interface StreamSinkParts {
  /** The client's response: it sets the pace. */
  client: ResponseSink
  /** Whoever shares the client's answer (retries that joined the call); they take every chunk and never ask to wait. */
  sharers: readonly ResponseSink[]
  /** A resumable stream's log, and the event that ends it in place of an unfinished one (broken off or cancelled). */
  resumable?: { log: StreamLog; lastEvent: () => Buffer }
  /** The event that ends a plain, untranslated stream the upstream broke off, in the client's format. */
  brokenEvent: () => Buffer
  /**
   * Shown the bytes of an untranslated stream as the client gets them, when the event that ends it early is numbered
   * after the events before it (a Responses stream's `sequence_number`).
   */
  seen?: (chunk: Buffer) => void
  /** The stream's translator, when the model that answered speaks another format than the client. */
  translation?: StreamTranslation
  /** Reads the end of the upstream's stream for its usage and finish reasons. */
  tail?: ResponseSink
  /** Takes the gateway's upstream keys out; absent when there are none to take out. */
  redaction?: KeyRedaction
  /** Takes out of an untranslated stream the usage the gateway asked for and its client did not. */
  askedUsage?: AskedUsage['strip']
}

/**
 * The sink a streamed upstream answer is written to. From the upstream inwards:
 *
 * 1. redaction, outermost, so that nothing after it (the tail, the translator, the log, the client, whoever shares
 *    its answer) ever holds an upstream key an upstream echoed;
 * 2. the tail, beside everything else, reads the upstream's own format: usage and finish reasons are read in the
 *    dialect of the model that answered;
 * 3. translation into the client's format; on a break it writes the error event itself and ends the stream;
 * 4. numbering, for a resumable stream, in the client's format (after translation): the log keeps and resumes events
 *    exactly as the client got them, and ends a broken stream with `lastEvent`. A plain stream that is not translated
 *    gets its error event here instead (a translated one already has the translator's); before it, an untranslated
 *    stream has the usage its client did not ask for taken out (the gateway asked for it to meter the call: the
 *    tail still reads it);
 * 5. what the client gets is shown to `seen` (untranslated streams: a translator numbers its own error event);
 * 6. the client and its sharers, innermost, get the same bytes, numbered `id`s included, so a joined retry or a
 *    resume sees what the client saw.
 */
export function buildStreamSinks(parts: StreamSinkParts): ResponseSink {
  const { resumable, translation, tail, redaction, seen, askedUsage } = parts
  let inClientTerms = tee(parts.client, parts.sharers)
  if (seen && !translation) inClientTerms = watchingSink(inClientTerms, seen)
  if (resumable) inClientTerms = numberingSink(inClientTerms, resumable.log, resumable.lastEvent)
  else if (!translation) inClientTerms = endingWithError(inClientTerms, parts.brokenEvent)
  if (askedUsage && !translation) inClientTerms = askedUsageSink(inClientTerms, askedUsage)
  const inUpstreamTerms = translation ? translatingSink(inClientTerms, translation) : inClientTerms
  const fanned = tee(inUpstreamTerms, tail ? [tail] : [])
  return redaction ? redactingSink(fanned, redaction) : fanned
}
