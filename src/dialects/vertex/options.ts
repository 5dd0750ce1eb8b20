// A Vertex AI upstream's own options: where it is (`project`, `location`, a `baseUrl` host root) and how it
// authenticates (`credentials`, or `apiKey` for express mode). Checked once, at construction.
import { baseUrlOf, fail } from '../../config/checks.js'

/** The option names a Vertex AI upstream takes besides the common ones. */
export const VERTEX_OPTION_NAMES = ['project', 'location', 'credentials', 'tokenTimeoutMs'] as const

/**
 * Locations as Google names them: `global`, the multi-regions `us` and `eu`, or a region such as `us-central1`,
 * `europe-west4`, `northamerica-northeast1`.
 */
const LOCATION = /^(?:global|us|eu|[a-z]+-[a-z]+\d+)$/

/** Project ids as Google allows them (6-30 lower-case letters, digits, hyphens), and the older domain-scoped `example.com:p`. */
const PROJECT = /^(?:[a-z][a-z0-9.-]*:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/

/** The longest delay a Node timer takes; a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647

/**
 * `tokenTimeoutMs`: how long the gateway waits for an access token (a service-account key's exchange, or Application
 * Default Credentials) before the calls waiting on it fail; whole ms from 1 up to the longest timer. Refused in express
 * mode, which fetches no token.
 */
export function tokenTimeoutOf(name: string, raw: Readonly<Record<string, unknown>>, fallback: number): number {
  const value = raw.tokenTimeoutMs
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    fail(`upstreams.${name}.tokenTimeoutMs must be a whole number of ms from 1 to ${MAX_TIMER_MS}, got ${String(value).slice(0, 40)}`)
  }
  if (raw.apiKey !== undefined || raw.apiKeys !== undefined) {
    fail(`upstreams.${name}.tokenTimeoutMs means nothing in express mode (apiKey): no token is fetched`)
  }
  return value
}

/** The host of a location's endpoint: the global one, a multi-region's, or a region's. */
export function hostOf(location: string): string {
  if (location === 'global') return 'https://aiplatform.googleapis.com'
  if (location === 'us' || location === 'eu') return `https://aiplatform.${location}.rep.googleapis.com`
  return `https://${location}-aiplatform.googleapis.com`
}

/** The project named by `project`, else by a service-account key's `project_id`; undefined in express mode. */
function projectOf(name: string, raw: Readonly<Record<string, unknown>>, keyProject: string | undefined): string | undefined {
  const project = raw.project ?? keyProject
  if (project === undefined) {
    if (raw.apiKey !== undefined || raw.apiKeys !== undefined) return undefined
    fail(`upstreams.${name}.project is required for a Vertex AI upstream (the Google Cloud project id, e.g. 'my-project')`)
  }
  if (typeof project !== 'string' || !PROJECT.test(project)) {
    fail(`upstreams.${name}.project must be a Google Cloud project id (6-30 lower-case letters, digits and hyphens)`)
  }
  return project
}

/**
 * The base URL of a Vertex AI upstream: its host (`baseUrl`, a host root, else the location's endpoint) and
 * `/v1/projects/{project}/locations/{location}`, under which every call's `publishers/…` path goes; `/v1` alone in
 * express mode (an `apiKey` and no project).
 */
export function vertexBaseUrl(name: string, raw: Readonly<Record<string, unknown>>, keyProject: string | undefined): string {
  const project = projectOf(name, raw, keyProject)
  const { location } = raw
  if (location === undefined && project !== undefined) {
    fail(`upstreams.${name}.location is required for a Vertex AI upstream ('global', 'us', 'eu' or a region such as 'us-central1')`)
  }
  if (location !== undefined && (typeof location !== 'string' || !LOCATION.test(location))) {
    fail(
      `upstreams.${name}.location must be 'global', 'us', 'eu' or a region such as 'us-central1' ` +
        `(got ${JSON.stringify(typeof location === 'string' ? location.slice(0, 64) : typeof location)})`,
    )
  }
  const host = raw.baseUrl === undefined ? hostOf(typeof location === 'string' ? location : 'global') : hostRoot(name, raw.baseUrl)
  if (project === undefined) return `${host}/v1`
  return `${host}/v1/projects/${encodeURIComponent(project)}/locations/${location as string}`
}

/** A configured `baseUrl`: a host root, to which the gateway adds `/v1/projects/…`; one that runs into that path is refused. */
function hostRoot(name: string, baseUrl: unknown): string {
  const url = baseUrlOf(name, baseUrl)
  const path = url.pathname.replace(/\/+$/, '')
  // A URL copied from a call or from the SDKs' own base (`…/v1`, `…/v1/projects/p/locations/l/publishers/…`).
  if (/^\/v1(?:beta1)?(?:\/|$)/.test(path) || /\/(?:projects|publishers)\//.test(path)) {
    const meant = path.replace(/\/v1(?:beta1)?(?:\/.*)?$/, '')
    fail(
      `upstreams.${name}.baseUrl ends in the path of a call ('${path}'), which the gateway adds itself from project and ` +
        `location; did you mean '${url.origin}${meant}'?`,
    )
  }
  return `${url.origin}${path}`
}
