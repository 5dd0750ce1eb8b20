import { GatewayError } from '../errors.js'
import type { ResponseHead, ResponseSink } from '../http/sink.js'
import type { StreamTranslator } from '../translate/index.js'
import type { GatewayLogger } from '../types.js'
import type { Translation } from './call-spec.js'
import { BROKEN_MESSAGE } from './stream-sinks.js'

/** The response header naming the fields of the client's request a translation dropped as hints (by path, comma-separated). */
export const DROPPED_HEADER = 'x-model-gateway-dropped'

/** The response header naming the values a translation lowered to what the target model takes, as `<path>=<value>`. */
export const CLAMPED_HEADER = 'x-model-gateway-clamped'

/**
 * Names the hint fields the translation of a call dropped, on the headers of its answer and in a debug line (their
 * names only, never their values): a dropped field is never dropped in silence. Passthrough calls have none.
 */
export function reportDropped(
  logger: GatewayLogger,
  requestId: string,
  translation: Translation | undefined,
  headers: Record<string, string | number>,
): void {
  const clamped = translation?.plan.clamped
  if (clamped && clamped.length > 0) headers[CLAMPED_HEADER] = clamped.join(',')
  const dropped = translation?.plan.dropped
  if (!dropped || dropped.length === 0) return
  headers[DROPPED_HEADER] = dropped.join(',')
  logger.debug?.('model-gateway: translation dropped fields that only hint the provider', { requestId, fields: dropped })
}

/** A whole answer as the client receives it. */
export interface ClientAnswer {
  contentType: string
  body: Buffer
}

const JSON_TYPE = 'application/json'

/**
 * An upstream's whole answer in the client's format: a 2xx body translated, an error body translated with its
 * status kept. A 2xx body that is not the upstream's format is the upstream's fault: 502.
 */
export function answerInClientTerms(translation: Translation, status: number, body: Buffer): ClientAnswer {
  const { translator, plan } = translation
  if (status < 200 || status >= 300)
    return { contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(translator.error(status, body, plan.requestId))) }
  const answer = translator.response(body, plan)
  if (!answer.ok) {
    throw new GatewayError('upstream_invalid_response', `The upstream's answer could not be read: ${answer.message}`)
  }
  return { contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(answer.value)) }
}

/**
 * A sink that passes on an upstream event stream in the client's format, event by event (never the whole answer).
 * A stream the upstream broke off ends with one error event in the client's format, so the client cannot take
 * the cut answer for a whole one.
 */
export function translatingSink(inner: ResponseSink, stream: StreamTranslator): ResponseSink {
  const pass = (text: string) => (text.length === 0 ? true : inner.write(Buffer.from(text)))
  return {
    complete: (head: ResponseHead, body: Buffer) => inner.complete(head, body),
    open: (head: ResponseHead) => inner.open(head),
    write: (chunk: Buffer) => pass(stream.write(chunk)),
    end() {
      pass(stream.end())
      inner.end()
    },
    abort() {
      // The error event says it all: the response then ends normally rather than with a cut connection.
      pass(stream.fail(502, BROKEN_MESSAGE))
      inner.end()
    },
  }
}
