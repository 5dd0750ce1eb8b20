import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream'
import zlib from 'node:zlib'
import type { ByteBudget } from '../byte-budget.js'
import { GatewayError } from '../errors.js'
import { joinedNow, joinInSlices } from '../http/join-chunks.js'

interface Decoder {
  stream: () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress
}

const DECODERS: Record<string, Decoder> = {
  gzip: { stream: () => zlib.createGunzip() },
  'x-gzip': { stream: () => zlib.createGunzip() },
  deflate: { stream: () => zlib.createInflate() },
  br: { stream: () => zlib.createBrotliDecompress() },
}

/** The error of a compressed answer that decodes past the budget: the answer is the upstream's fault, a 502. */
export function decodeBudgetExceeded(total: number): GatewayError {
  return new GatewayError(
    'upstream_response_too_large',
    `The upstream's compressed response decodes to more than the gateway decodes at once (${total} bytes).`,
  )
}

/** The decoder of a `content-encoding` value: undefined for none; a 502 for one the gateway cannot read. */
function decoderOf(encoding: string | string[] | undefined): Decoder | undefined {
  const value = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase()
  if (value === '' || value === 'identity') return undefined
  const decoder = DECODERS[value]
  if (!decoder) {
    throw new GatewayError(
      'upstream_unreachable',
      `The upstream answered with Content-Encoding '${value.slice(0, 40)}', which the gateway cannot read.`,
    )
  }
  return decoder
}

/**
 * The body as plain bytes. The gateway asks for `identity`, but an upstream (or a proxy before it) may compress
 * anyway: such a body is decoded here, so clients get, and records keep, the bytes the encoding stood for.
 */
export function decodedBody(body: Readable, encoding: string | string[] | undefined): Readable {
  let decoder: Decoder | undefined
  try {
    decoder = decoderOf(encoding)
  } catch (error) {
    body.on('error', () => {})
    body.destroy()
    throw error
  }
  if (!decoder) return body
  // pipeline forwards an error of either side to the decoder, which the readers listen to.
  return pipeline(body, decoder.stream(), () => {})
}

/**
 * A whole body as plain bytes, decoded off the event loop (zlib's thread pool) when the upstream compressed it,
 * chunk by chunk so each chunk is counted against `budget` as it comes out: rejects with `ERR_BUFFER_TOO_LARGE` past
 * `maxBytes` decoded, and with a 502 when the decoded bytes would pass the budget. The budget is given back once the
 * body is decoded (or refused): it bounds the work of decoding, the whole answer then weighs what a plain one does.
 */
export function decodedWhole(
  bytes: Buffer,
  encoding: string | string[] | undefined,
  maxBytes: number,
  budget: ByteBudget,
): Promise<Buffer> {
  const decoder = decoderOf(encoding)
  if (!decoder) return Promise.resolve(bytes)
  return new Promise((resolve, reject) => {
    const stream = decoder.stream()
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const stop = (error: Error) => {
      if (settled) return
      settled = true
      budget.give(size)
      stream.destroy()
      reject(error)
    }
    stream.on('data', (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) return stop(Object.assign(new Error('decoded past the limit'), { code: 'ERR_BUFFER_TOO_LARGE' }))
      if (!budget.take(chunk.length)) return stop(decodeBudgetExceeded(budget.total))
      size += chunk.length
      chunks.push(chunk)
    })
    stream.once('error', (error) => stop(error))
    stream.once('end', () => {
      if (settled) return
      settled = true
      budget.give(size)
      const joined = joinedNow(chunks, size)
      if (joined) resolve(joined)
      else joinInSlices(chunks, size).then(resolve, reject)
    })
    stream.end(bytes)
  })
}
