import { constants } from 'node:buffer'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream'
import zlib from 'node:zlib'
import { GatewayError } from '../errors.js'

type OneShot = (buffer: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions, callback: zlib.CompressCallback) => void

interface Decoder {
  stream: () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress
  whole: OneShot
}

const DECODERS: Record<string, Decoder> = {
  gzip: { stream: () => zlib.createGunzip(), whole: zlib.gunzip },
  'x-gzip': { stream: () => zlib.createGunzip(), whole: zlib.gunzip },
  deflate: { stream: () => zlib.createInflate(), whole: zlib.inflate },
  br: { stream: () => zlib.createBrotliDecompress(), whole: zlib.brotliDecompress },
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
 * A whole body as plain bytes, decoded off the event loop (zlib's thread pool) when the upstream compressed it;
 * rejects with zlib's `ERR_BUFFER_TOO_LARGE` past `maxBytes` decoded.
 */
export function decodedWhole(bytes: Buffer, encoding: string | string[] | undefined, maxBytes: number): Promise<Buffer> {
  const decoder = decoderOf(encoding)
  if (!decoder) return Promise.resolve(bytes)
  return new Promise((resolve, reject) => {
    decoder.whole(bytes, { maxOutputLength: Math.min(maxBytes, constants.MAX_LENGTH) }, (error, result) =>
      error ? reject(error) : resolve(result),
    )
  })
}
