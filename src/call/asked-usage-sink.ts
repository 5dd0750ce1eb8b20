import type { AskedUsage } from '../dialects/index.js'
import type { ResponseSink } from '../http/sink.js'
import { EventSplitter } from '../sse/split.js'

const USAGE = Buffer.from('"usage"')

/**
 * A sink that takes out of a stream the usage its client did not ask for (the gateway asked for it to meter the
 * call), event by event. Events that name no usage pass as the bytes they came in.
 */
export function askedUsageSink(inner: ResponseSink, strip: AskedUsage['strip']): ResponseSink {
  const splitter = new EventSplitter()
  return {
    complete: (head, body) => inner.complete(head, body),
    open: (head) => inner.open(head),
    write(chunk) {
      const out: Buffer[] = []
      for (const event of splitter.push(chunk)) {
        if (!event.includes(USAGE)) {
          out.push(event)
          continue
        }
        const kept = strip(event.toString('utf8'))
        if (kept !== undefined) out.push(Buffer.from(kept, 'utf8'))
      }
      if (out.length === 0) return true
      return inner.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out))
    },
    end() {
      const rest = splitter.rest()
      if (rest) inner.write(rest)
      inner.end()
    },
    abort: (error) => inner.abort(error),
  }
}
