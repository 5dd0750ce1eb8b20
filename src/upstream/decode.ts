import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream'
import zlib from 'node:zlib'
import { GatewayError } from '../errors.js'

const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
}

/**
 * The body as plain bytes. The gateway asks for `identity`, but an upstream (or a proxy before it) may compress
 * anyway: such a body is decoded here, so clients get, and records keep, the bytes the encoding stood for.
 */
export function decodedBody(body: Readable, encoding: string | string[] | undefined): Readable {
  const value = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase()
  if (value === '' || value === 'identity') return body
  const make = DECODERS[value]
  if (!make) {
    body.on('error', () => {})
    body.destroy()
    throw new GatewayError(
      'upstream_unreachable',
      `The upstream answered with Content-Encoding '${value.slice(0, 40)}', which the gateway cannot read.`,
    )
  }
  // pipeline forwards an error of either side to the decoder, which the readers listen to.
  return pipeline(body, make(), () => {})
}
