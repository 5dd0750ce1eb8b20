import type { ResponseHead, ResponseSink } from '../http/sink.js'

/**
 * One response to several sinks. The primary sink (the client) sets the pace: its `write` result is the one
 * returned; the others take every chunk and must never ask to wait.
 */
export function tee(primary: ResponseSink, others: readonly ResponseSink[]): ResponseSink {
  if (others.length === 0) return primary
  return {
    complete(head: ResponseHead, body: Buffer) {
      primary.complete(head, body)
      for (const sink of others) sink.complete(head, body)
    },
    open(head: ResponseHead) {
      primary.open(head)
      for (const sink of others) sink.open(head)
    },
    write(chunk: Buffer) {
      const more = primary.write(chunk)
      for (const sink of others) sink.write(chunk)
      return more
    },
    end() {
      primary.end()
      for (const sink of others) sink.end()
    },
    abort(error: Error) {
      primary.abort(error)
      for (const sink of others) sink.abort(error)
    },
  }
}
