import { Worker } from 'node:worker_threads'
import { GatewayError } from '../errors.js'
import { canonicalHashing } from './canonical.js'
import { type ByteHashJob, canonicalByteHashing } from './canonical-bytes.js'
import { canonicalOutput } from './canonical-out.js'

/**
 * Bytes of a body hashed in one turn of the worker before it moves to the next owner's job: one slice costs a few
 * milliseconds whatever the body's shape, so a job waits for at most one slice of each other owner's, never for a
 * whole body of theirs.
 */
export const HASH_SLICE_BYTES = 256 * 1024

/** What the worker's program is given: its port, the hashing code, and the bounds of a turn. */
interface WorkerDeps {
  port: { on(event: 'message', listener: (message: Job) => void): void; postMessage(reply: Reply): void }
  crypto: typeof import('node:crypto')
  isUtf8: (bytes: Uint8Array) => boolean
  canonicalHashing: typeof canonicalHashing
  canonicalByteHashing: typeof canonicalByteHashing
  canonicalOutput: typeof canonicalOutput
  sliceBytes: number
}

interface Job {
  id: number
  owner: string
  bytes: Uint8Array
}

type Reply = { id: number; hash: string } | { id: number; invalid: string }

/**
 * The worker's program, run from its source like the hashing code it uses. Jobs wait in one queue per owner;
 * the worker serves the owners in turn, one slice of the job at the head of each queue per turn, with a turn of
 * its own event loop between slices so jobs that arrive meanwhile join the rotation at once.
 */
function workerProgram(deps: WorkerDeps): void {
  const bytesHashing = deps.canonicalByteHashing({ createHash: deps.crypto.createHash, output: deps.canonicalOutput() })
  const valueHashing = deps.canonicalHashing(deps.crypto)
  // Invalid UTF-8 never reaches here from the gateway (it is refused first); other callers get the hash of the
  // text as decoded, with U+FFFD for each bad sequence, as on the main thread.
  const decodedJob = (bytes: Uint8Array): ByteHashJob => {
    let hash = ''
    return {
      step(): boolean {
        const value: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
        hash = valueHashing.hashPieces(valueHashing.canonicalPieces(value))
        return true
      },
      result: () => hash,
    }
  }
  const queues = new Map<string, { job: Job; work: ByteHashJob | undefined }[]>()
  let pumping = false

  const pump = (): void => {
    const first = queues.entries().next().value
    if (first === undefined) {
      pumping = false
      return
    }
    const [owner, queue] = first
    queues.delete(owner)
    const head = queue[0] as (typeof queue)[number]
    try {
      const work = head.work ?? (deps.isUtf8(head.job.bytes) ? bytesHashing.start(head.job.bytes) : decodedJob(head.job.bytes))
      head.work = work
      if (work.step(deps.sliceBytes)) {
        queue.shift()
        deps.port.postMessage({ id: head.job.id, hash: work.result() })
      }
    } catch (error) {
      queue.shift()
      deps.port.postMessage({ id: head.job.id, invalid: String(error instanceof Error ? error.message : error) })
    }
    // Back of the rotation: every other owner waiting gets a slice before this one gets another.
    if (queue.length > 0) queues.set(owner, queue)
    setImmediate(pump)
  }

  deps.port.on('message', (job) => {
    const queue = queues.get(job.owner)
    if (queue === undefined) queues.set(job.owner, [{ job, work: undefined }])
    else queue.push({ job, work: undefined })
    if (!pumping) {
      pumping = true
      setImmediate(pump)
    }
  })
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
;(${workerProgram.toString()})({
  port: parentPort,
  crypto: require('node:crypto'),
  isUtf8: require('node:buffer').isUtf8,
  canonicalHashing: ${canonicalHashing.toString()},
  canonicalByteHashing: ${canonicalByteHashing.toString()},
  canonicalOutput: ${canonicalOutput.toString()},
  sliceBytes: ${HASH_SLICE_BYTES},
})
`

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

  hash(bytes: Uint8Array, owner: string): Promise<string> {
    const worker = this.worker ?? this.start()
    const id = this.nextId++
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.ref()
      // Bytes in shared memory (a large body, see join-chunks.ts) are shared, others copied: the caller keeps its
      // buffer to forward and store either way, and neither side writes to it.
      worker.postMessage({ id, owner, bytes } satisfies Job)
    })
  }

  /** Jobs handed to the worker and not yet answered. */
  get waiting(): number {
    return this.pending.size
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

/**
 * The request_body_hash of JSON bytes, computed on a worker thread shared by the process. `owner` is whose call
 * it is: owners are served in turn, a slice of a body each, so one owner's huge body delays another's by slices.
 */
export function requestBodyHashOffLoop(bytes: Uint8Array, owner = ''): Promise<string> {
  return shared.hash(bytes, owner)
}

/** How many hashes the worker holds now: lets a test know a body reached the worker before sending the next. */
export function hashesInWorker(): number {
  return shared.waiting
}
