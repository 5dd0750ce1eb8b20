import { Worker } from 'node:worker_threads'
import { GatewayError } from '../errors.js'
import { canonicalHashing } from './canonical.js'

/**
 * The worker's program: the canonical hashing code itself (from its source, see canonical.ts), fed with bodies.
 * A body that is not JSON answers with an error message; anything else it answers with the hash.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const hashing = (${canonicalHashing.toString()})(require('node:crypto'))
parentPort.on('message', ({ id, bytes }) => {
  let value
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
  } catch (error) {
    parentPort.postMessage({ id, invalid: String(error && error.message) })
    return
  }
  parentPort.postMessage({ id, hash: hashing.hashPieces(hashing.canonicalPieces(value)) })
})
`

type Reply = { id: number; hash: string } | { id: number; invalid: string }

interface Pending {
  resolve(hash: string): void
  reject(error: Error): void
}

/**
 * Hashes large bodies on a worker thread, so parsing and canonicalising tens of megabytes never stalls the event
 * loop. One worker for the process, started on first use, never keeping the process alive; if it dies, the calls
 * it held fail and the next call starts a new one.
 */
class HashWorker {
  private worker: Worker | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 0

  hash(bytes: Uint8Array): Promise<string> {
    const worker = this.worker ?? this.start()
    const id = this.nextId++
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.ref()
      // Bytes in shared memory (a large body, see join-chunks.ts) are shared, others copied: the caller keeps its
      // buffer to forward and store either way, and neither side writes to it.
      worker.postMessage({ id, bytes })
    })
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true })
    worker.unref()
    worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id)
      this.pending.delete(reply.id)
      if (this.pending.size === 0) worker.unref()
      if (!waiting) return
      if ('hash' in reply) waiting.resolve(reply.hash)
      else waiting.reject(new GatewayError('invalid_request', 'Request body is not valid JSON.', { cause: new SyntaxError(reply.invalid) }))
    })
    const fail = (error: unknown) => {
      if (this.worker === worker) this.worker = undefined
      const message = error instanceof Error ? error.message : `exited with code ${String(error)}`
      for (const waiting of this.pending.values()) waiting.reject(new Error(`model-gateway: the hashing worker failed: ${message}`))
      this.pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', fail)
    this.worker = worker
    return worker
  }
}

const shared = new HashWorker()

/** The request_body_hash of JSON bytes, computed on a worker thread. */
export function requestBodyHashOffLoop(bytes: Uint8Array): Promise<string> {
  return shared.hash(bytes)
}
