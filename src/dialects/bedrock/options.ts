// A Bedrock upstream's own options: where it is (`region`, or `baseUrl` for a VPC endpoint), how its calls are
// signed (`credentials`), and how large one frame of its streams may be (`maxFrameBytes`).
import { fail, knownKeys } from '../../config/checks.js'
import { isObject } from '../../json/value.js'

/** The options a Bedrock upstream takes besides the common ones. */
export const BEDROCK_OPTION_NAMES = ['region', 'credentials'] as const

/** An AWS region as AWS names them: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `ap-southeast-5`. */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/

/** The region in a Bedrock runtime host (`bedrock-runtime.us-east-1.amazonaws.com`, a VPC endpoint's `…bedrock-runtime.us-east-1.vpce.amazonaws.com`). */
const HOST_REGION = /bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d{1,2})\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/

/** The default most bytes of one event-stream frame: Bedrock's frames are an event each, a few KiB. */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024

/** The configured region, checked; undefined when none is set. */
function configuredRegion(name: string, raw: Readonly<Record<string, unknown>>): string | undefined {
  if (raw.region === undefined) return undefined
  if (typeof raw.region !== 'string' || !REGION.test(raw.region)) {
    fail(`upstreams.${name}.region must be an AWS region such as 'us-east-1' (got ${JSON.stringify(raw.region)})`)
  }
  return raw.region
}

/** The Bedrock runtime endpoint of the upstream's `region`: what it calls when no `baseUrl` is set. */
export function bedrockBaseUrl(name: string, raw: Readonly<Record<string, unknown>>): string {
  const region = configuredRegion(name, raw)
  if (region === undefined) fail(`upstreams.${name} of type 'bedrock' needs region (such as 'us-east-1') or baseUrl`)
  return `https://bedrock-runtime.${region}.amazonaws.com`
}

/**
 * The region calls are signed for: the configured one, else the one in a `baseUrl`'s AWS host; a signed upstream
 * elsewhere (a proxy, the mock) must say it.
 */
export function signingRegion(name: string, raw: Readonly<Record<string, unknown>>): string {
  const region = configuredRegion(name, raw)
  if (region !== undefined) return region
  const host = typeof raw.baseUrl === 'string' && URL.canParse(raw.baseUrl) ? new URL(raw.baseUrl).hostname : ''
  const found = HOST_REGION.exec(host)?.[1]
  if (found === undefined) fail(`upstreams.${name}.region is needed to sign calls to a baseUrl outside AWS's bedrock-runtime hosts`)
  return found
}

/** Why a `maxFrameBytes` cannot bound an event stream's frames, or undefined when it can. */
export function frameBoundProblem(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1024
    ? undefined
    : 'must be an integer of at least 1024 (bytes)'
}

/** Static AWS credentials as configured. */
export interface StaticCredentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

const CREDENTIAL_KEYS = ['accessKeyId', 'secretAccessKey', 'sessionToken']

/** The member a misspelt one likely meant (`secretKey`, `SecretAccessKey`, `session_token`), by what it names. */
function meantKey(key: string): string | undefined {
  const plain = key.toLowerCase().replace(/[^a-z]/g, '')
  if (plain.includes('secret')) return 'secretAccessKey'
  if (plain.includes('token')) return 'sessionToken'
  if (plain.includes('access') || plain.includes('keyid')) return 'accessKeyId'
  return undefined
}

/** A `credentials` object checked: both keys present, no member misspelt (`secretKey` would sign with nothing). */
export function staticCredentials(name: string, raw: unknown): StaticCredentials {
  const where = `upstreams.${name}.credentials`
  if (!isObject(raw)) fail(`${where} must be { accessKeyId, secretAccessKey, sessionToken? } or a function returning them`)
  for (const key of Object.keys(raw)) {
    const meant = meantKey(key)
    if (meant !== undefined && meant !== key)
      fail(`${where}.${key} is not an option; did you mean \`${meant}\`? (known: ${CREDENTIAL_KEYS.join(', ')})`)
  }
  knownKeys(raw, CREDENTIAL_KEYS, `${where}.`)
  for (const key of ['accessKeyId', 'secretAccessKey'] as const) {
    if (typeof raw[key] !== 'string' || raw[key] === '') fail(`${where}.${key} must be a non-empty string`)
  }
  if (raw.sessionToken !== undefined && (typeof raw.sessionToken !== 'string' || raw.sessionToken === '')) {
    fail(`${where}.sessionToken must be a non-empty string`)
  }
  const credentials: StaticCredentials = { accessKeyId: raw.accessKeyId as string, secretAccessKey: raw.secretAccessKey as string }
  if (typeof raw.sessionToken === 'string') credentials.sessionToken = raw.sessionToken
  return credentials
}
