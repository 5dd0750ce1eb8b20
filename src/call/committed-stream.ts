import { isGatewayError } from '../errors.js'
import type { ClientSink, ResponseHead, ResponseSink } from '../http/sink.js'
import { answeredError, type EndingSource, StreamEnding } from './stream-sinks.js'

/**
 * A stream a keep-alive committed before its upstream answered can no longer answer an error with a status: it ends
 * with the error event of the client's format, as a broken stream does. Returns the error, to be thrown on.
 */
export function endCommitted(source: EndingSource, client: ClientSink, error: unknown): unknown {
  if (!client.openedEarly) return error
  const facts = isGatewayError(error)
    ? { status: error.status ?? 500, code: error.code === 'invalid_options' ? 'internal_error' : error.code, message: error.message }
    : { status: 500, code: 'internal_error' as const, message: 'The gateway failed to handle this request.' }
  client.write(new StreamEnding(source).failed({ ...facts, param: undefined }))
  client.end()
  return error
}

/** The client of a committed stream as a sink for an upstream's error answer: the answer becomes the stream's last event. */
export function errorAsEvent(source: EndingSource, client: ClientSink): ResponseSink {
  return {
    complete(head: ResponseHead, body: Buffer) {
      client.write(new StreamEnding(source).failed(answeredError(head.status, body)))
      client.end()
    },
    open: () => {},
    write: () => true,
    end: () => client.end(),
    abort: () => client.end(),
  }
}
