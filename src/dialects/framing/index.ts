// Stream framings as codecs: how a stream's events go on the wire. The gateway keeps, journals and resumes events;
// a framing is chosen per operation (`OperationFormat.framing`), Server-Sent Events unless the operation says another.

import type { Operation } from '../../types.js'
import type { OperationFormat } from '../dialect.js'
import { OPERATIONS } from '../index.js'
import type { ClientFraming } from './framing.js'
import { sse } from './sse.js'

/** The framing a stream of `format` is written in. */
export function clientFraming(format: Pick<OperationFormat, 'framing'> | undefined): ClientFraming {
  return format?.framing ?? sse
}

/** The framing a stream of `operation` is written in (a kept record's, by its `request.endpoint`). */
export function operationFraming(operation: Operation): ClientFraming {
  return clientFraming(OPERATIONS.get(operation))
}

/** The framing of streams whose operation is not at hand (a journal head written before heads named it): the default. */
export const DEFAULT_FRAMING: ClientFraming = sse

/** The `accept` an upstream call asks with: its upstream dialect's stream framing, or JSON for a whole answer. */
export function upstreamAccept(streamAccept: string | undefined, stream: boolean): string {
  return stream ? (streamAccept ?? sse.contentType) : 'application/json'
}

export { sse } from './sse.js'
export { eventFramingWriter, type SseFields, sseFields } from './writer.js'
