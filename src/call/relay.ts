import type { Readable } from 'node:stream'
import type { ClientSink, ResponseSink } from '../http/sink.js'

/** How a relay treats a client that leaves. */
export interface RelayOptions {
  /** The stream goes on without its client (it is kept): a pause for a client that left must end. */
  pastClient: boolean
}

/**
 * Pipes an upstream event stream into a sink chunk by chunk, pausing the upstream while the client's socket is
 * full. Plain events rather than `for await`, which delays every chunk by a few microtask turns.
 */
export function relay(body: Readable | Buffer, sink: ResponseSink, client: ClientSink, options: RelayOptions): Promise<void> {
  // A body an interceptor already read whole is one chunk.
  if (Buffer.isBuffer(body)) {
    sink.write(body)
    return Promise.resolve()
  }
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      if (!sink.write(chunk)) body.pause()
    }
    const stopDrain = client.onDrain(() => body.resume())
    // A socket that closed never drains: a stream that outlives its client resumes then.
    const stopGone = options.pastClient ? client.watch.onGone(() => body.resume()) : undefined
    const done = (error?: Error) => {
      body.off('data', onData)
      stopDrain()
      stopGone?.()
      if (error) reject(error)
      else resolve()
    }
    body.on('data', onData)
    body.once('end', () => done())
    body.once('error', done)
  })
}
