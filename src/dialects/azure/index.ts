// Azure OpenAI as an upstream: OpenAI's wire formats (chat completions, Responses, embeddings) on Azure's paths and
// credentials. It serves no client routes: Azure's own SDK clients are OpenAI clients, served by the OpenAI dialect,
// whose calls reach an Azure upstream passthrough (`speaks`).
import { fail } from '../../config/checks.js'
import type { Operation } from '../../types.js'
import type { Dialect, UpstreamApi } from '../dialect.js'
import { openai } from '../openai/index.js'
import { azureChatFormat, azureResponsesFormat } from './content-filter.js'
import { tokenAuthorizer } from './token.js'

/** An Azure resource name: what goes before `.openai.azure.com`. */
const RESOURCE = /^[a-z0-9][a-z0-9-]{0,62}$/i

/** An Azure OpenAI API version: a date, a preview of one. */
const API_VERSION = /^\d{4}-\d{2}-\d{2}(?:-preview)?$/

/** The APIs a translated call can take to an Azure upstream, by its `api` option (as OpenAI's). */
const UPSTREAM_APIS: Readonly<Record<string, UpstreamApi>> = {
  chat: { format: azureChatFormat, operation: 'chat.completions' },
  responses: { format: azureResponsesFormat, operation: 'responses' },
}

/** The path of each operation below a v1 base path, and below a deployment (chat, embeddings) in the deployments API. */
const OPERATION_PATHS: Partial<Record<Operation, string>> = { embeddings: '/embeddings', responses: '/responses' }

/**
 * The path of a call. The v1 API (no `apiVersion`) names the model in the body, below `baseUrl` (`…/openai/v1`); the
 * deployments API names it in the path below `baseUrl` without its `/v1`, and takes `api-version` in the query. A
 * Responses call has no deployment in its path there either.
 */
function upstreamPath(basePath: string, upstreamModel: string, operation: Operation, apiVersion: string | undefined): string {
  const tail = OPERATION_PATHS[operation] ?? '/chat/completions'
  if (!apiVersion) return `${basePath}${tail}`
  const root = basePath.replace(/\/v1$/, '')
  const query = `?api-version=${encodeURIComponent(apiVersion)}`
  if (operation === 'responses') return `${root}/responses${query}`
  return `${root}/deployments/${encodeURIComponent(upstreamModel)}${tail}${query}`
}

/** Checks the options only Azure upstreams take, and `resource` against `baseUrl`. */
function checkOptions(name: string, raw: Readonly<Record<string, unknown>>): void {
  if (raw.baseUrl !== undefined && raw.resource !== undefined) fail(`upstreams.${name} takes baseUrl or resource, not both`)
  const keyed = raw.apiKey !== undefined || raw.apiKeys !== undefined
  if (raw.tokenProvider !== undefined) {
    if (typeof raw.tokenProvider !== 'function')
      fail(`upstreams.${name}.tokenProvider must be a function returning a promise of an access token`)
    if (keyed) fail(`upstreams.${name} takes apiKey (or apiKeys) or tokenProvider, not both`)
  } else if (!keyed && raw.keyless !== true) {
    fail(`upstreams.${name} needs apiKey, apiKeys or tokenProvider (Entra ID)`)
  }
}

/**
 * Azure OpenAI (`type: 'azure'`): OpenAI's formats, `api-key` or an Entra ID token, the v1 API or, with `apiVersion`,
 * the deployments API.
 */
export const azure: Dialect<'azure'> = {
  // The OpenAI dialect's readers of answers, usage, finish reasons and errors: the wire is OpenAI's.
  ...openai,
  name: 'azure',
  speaks: openai,
  upstreamsCalled: 'Azure OpenAI',
  routes: [],
  clientHeaders: [],
  recognises: () => false,
  upstreamOptions: {
    // As OpenAI's: the API calls translated from another dialect take.
    ...openai.upstreamOptions,
    // Read by the path: set, calls take the deployments API with this `api-version`; unset (''), the v1 API.
    apiVersion: {
      default: '',
      problem: (value) =>
        typeof value === 'string' && API_VERSION.test(value) ? undefined : "must be an Azure API version such as '2024-10-21'",
    },
  },
  upstreamOptionNames: ['resource', 'tokenProvider'],
  upstreamFormat: azureChatFormat,
  upstreamApiFor: (options) => UPSTREAM_APIS[options.api ?? 'chat'] ?? (UPSTREAM_APIS.chat as UpstreamApi),
  // Azure serves no input-token counting: an Anthropic client's count on an Azure model is refused, saying so.
  countingApi: undefined,
  otelProviderName: 'azure.ai.openai',
  upstreamAuthHeaders: (apiKey) => ({ 'api-key': apiKey }),
  // `…/openai/v1/chat/completions` copied whole, or a deployment's URL: every call would miss.
  intendedBasePath: (pathname) => {
    const path = pathname.replace(/\/+$/, '')
    const match = /^(.*?\/openai)(?:\/v1)?\/(?:deployments\/[^/]+\/)?(?:chat\/completions|responses|embeddings)$/.exec(path)
    return match ? `${match[1]}/v1` : undefined
  },
  // Azure's API lives under `/openai/v1`; a gateway in front of it (API Management) may put it elsewhere, so this only warns.
  doubtfulBasePath: (pathname) => (/\/v1$/.test(pathname.replace(/\/+$/, '')) ? undefined : '/openai/v1'),
  upstreamPath: (basePath, upstreamModel, operation, _stream, options) =>
    upstreamPath(basePath, upstreamModel, operation, options?.apiVersion),
  baseUrlFrom(name, raw) {
    checkOptions(name, raw)
    if (raw.resource === undefined) fail(`upstreams.${name} needs baseUrl (https://{resource}.openai.azure.com/openai/v1) or resource`)
    if (typeof raw.resource !== 'string' || !RESOURCE.test(raw.resource)) {
      fail(`upstreams.${name}.resource must be an Azure resource name (letters, digits, -), the {resource} of {resource}.openai.azure.com`)
    }
    return `https://${raw.resource}.openai.azure.com/openai/v1`
  },
  upstreamAuthorizer(name, raw) {
    checkOptions(name, raw)
    return raw.tokenProvider === undefined ? undefined : tokenAuthorizer(raw.tokenProvider as () => Promise<string>)
  },
}
