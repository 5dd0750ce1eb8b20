import type { ResponseHead, ResponseSink } from '../http/sink.js'
import type { KeyRedaction } from '../upstream/redact.js'

/** A sink that passes on a stream with the gateway's upstream keys taken out, chunk by chunk. */
export function redactingSink(inner: ResponseSink, redaction: KeyRedaction): ResponseSink {
  const stream = redaction.stream()
  return {
    complete: (head: ResponseHead, body: Buffer) => inner.complete(head, redaction.whole(body)),
    open: (head: ResponseHead) => inner.open(head),
    write(chunk: Buffer) {
      const out = stream.chunk(chunk)
      return out.length === 0 ? true : inner.write(out)
    },
    end() {
      const rest = stream.flush()
      if (rest) inner.write(rest)
      inner.end()
    },
    abort: (error: Error) => inner.abort(error),
  }
}
