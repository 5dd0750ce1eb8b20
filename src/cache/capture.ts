import type { AnswerCapture } from '../call/call-spec.js'
import type { ResponseHead, ResponseSink } from '../http/sink.js'
import type { ServedBy } from '../upstream/send.js'

/** An upstream's answer as it came, whole or streamed (a stream as the SSE text it was relayed from). */
export interface CapturedAnswer {
  kind: 'whole' | 'stream'
  status: number
  contentType: string | undefined
  body: Buffer
  served: ServedBy
}

/**
 * Takes one call's upstream answer for the cache, holding only references to the chunks the call relays anyway; a
 * stream past `maxBytes` is let go of at once. `answer()` is the answer once the call is over, or undefined when
 * there is none to keep: no answer, a stream that broke off or was cut, one too large.
 */
export class AnswerTaking implements AnswerCapture {
  #answer: CapturedAnswer | undefined
  #chunks: Buffer[] = []
  #bytes = 0
  #state: 'none' | 'streaming' | 'ended' | 'dropped' = 'none'
  #stream: { contentType: string | undefined; served: ServedBy } | undefined

  constructor(private readonly maxBytes: number) {}

  whole(status: number, contentType: string | undefined, body: Buffer, served: ServedBy): void {
    if (body.length > this.maxBytes) return
    this.#answer = { kind: 'whole', status, contentType, body, served }
  }

  stream(contentType: string | undefined, served: ServedBy): ResponseSink {
    this.#stream = { contentType, served }
    this.#state = 'streaming'
    return this.#sink()
  }

  /** The sink a streamed answer is taken through: made only for a stream (a whole answer, the commonest, needs none). */
  #sink(): ResponseSink {
    return {
      complete: (_head: ResponseHead, _body: Buffer) => {
        this.#state = 'dropped'
      },
      open: () => {},
      write: (chunk: Buffer) => {
        if (this.#state !== 'streaming') return true
        this.#bytes += chunk.length
        if (this.#bytes > this.maxBytes) this.#drop()
        else this.#chunks.push(chunk)
        return true
      },
      end: () => {
        if (this.#state === 'streaming') this.#state = 'ended'
      },
      abort: () => this.#drop(),
    }
  }

  #drop(): void {
    this.#state = 'dropped'
    this.#chunks = []
  }

  /** The answer taken, once the call is over; undefined when there is nothing whole to keep. */
  answer(): CapturedAnswer | undefined {
    if (this.#answer) return this.#answer
    if (this.#state !== 'ended' || !this.#stream) return undefined
    const body = Buffer.concat(this.#chunks, this.#bytes)
    return { kind: 'stream', status: 200, contentType: this.#stream.contentType, body, served: this.#stream.served }
  }
}
