import { GatewayError } from '../errors.js'
import { nearestName } from './suggest.js'

// The checks every options resolver shares: one error kind, unknown keys named with the nearest valid one.

/** Throws the construction error every option check ends in. */
export function fail(message: string): never {
  throw new GatewayError('invalid_options', message)
}

/** Rejects keys an options object does not know, naming the nearest valid one. */
export function knownKeys(value: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const near = nearestName(key, known)
    fail(`${where}${key} is not an option${near ? `; did you mean \`${near}\`?` : ''} (known: ${known.join(', ')})`)
  }
}

/** A configured `upstreams.<name>.baseUrl`, parsed: an http or https URL with no query, fragment or credentials. */
export function baseUrlOf(name: string, value: unknown): URL {
  if (typeof value !== 'string') fail(`upstreams.${name}.baseUrl must be a URL string`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    fail(`upstreams.${name}.baseUrl is not a valid URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`upstreams.${name}.baseUrl must be http or https`)
  if (url.search || url.hash || url.username || url.password) {
    fail(`upstreams.${name}.baseUrl must not carry a query, fragment or credentials`)
  }
  return url
}
