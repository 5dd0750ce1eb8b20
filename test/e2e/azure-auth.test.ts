// Entra ID tokens for an Azure upstream: asked of the tokenProvider once and again only before they expire (never per
// call, one request in flight), a provider that fails or hands over an expired token is the client's 502
// `upstream_auth_failed` in its own format with the cause in the log and never a token; and bad Azure options.
import { afterEach, describe, expect, it } from 'vitest'
import { azure } from '../../src/dialects/azure/index.js'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { AZURE_KEY, type AzureChain, CLIENTS, jwt, startAzureChain } from '../support/azure.js'
import { KEY_A } from '../support/fixture.js'

const chains: AzureChain[] = []
afterEach(async () => {
  for (const chain of chains.splice(0)) await chain.close()
})

/** A gateway whose Azure upstream takes its tokens from `provider`; the mock accepts the tokens in `accepted`. */
async function withProvider(provider: () => Promise<string>, accepted: Set<string>): Promise<AzureChain> {
  const chain = await startAzureChain(
    (mockUrl) => ({ az: { type: 'azure', baseUrl: `${mockUrl}/openai/v1`, tokenProvider: provider } }),
    [{ id: 'gpt-az', upstream: 'az', upstreamModel: 'gpt-4o-mini' }],
    (token) => accepted.has(token),
  )
  chains.push(chain)
  return chain
}

const chat = CLIENTS[0] as (typeof CLIENTS)[number]
const bearerOf = (chain: AzureChain) => chain.mock.requests.map((request) => request.headers.authorization)

describe('tokenProvider', () => {
  it('is asked once for a token that lives, and its token rides every call as Bearer', async () => {
    const token = jwt(3600, 'long')
    let asked = 0
    const chain = await withProvider(
      async () => {
        asked++
        return token
      },
      new Set([token]),
    )
    // Calls at once share the one request for a token.
    const answers = await Promise.all([1, 2, 3].map(() => chat.ask(chain.url, 'gpt-az')))
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200])
    for (const client of CLIENTS) expect((await client.ask(chain.url, 'gpt-az')).status).toBe(200)
    expect(asked).toBe(1)
    expect(bearerOf(chain)).toEqual(Array(7).fill(`Bearer ${token}`))
    expect(chain.mock.requests.every((request) => request.headers['api-key'] === undefined)).toBe(true)
  })

  it('is asked again, off the call path, once the kept token has less than 5 minutes left', async () => {
    const tokens = [jwt(120, 'soon-expiring'), jwt(3600, 'fresh')]
    let asked = 0
    const chain = await withProvider(async () => tokens[Math.min(asked++, 1)] as string, new Set(tokens))
    for (let i = 0; i < 4; i++) expect((await chat.ask(chain.url, 'gpt-az')).status).toBe(200)
    // The first call fetched the short-lived token; the second went with it while the next one was fetched.
    expect(bearerOf(chain)).toEqual([tokens[0], tokens[0], tokens[1], tokens[1]].map((t) => `Bearer ${t}`))
    expect(asked).toBe(2)
  })

  it('a provider that fails is a 502 upstream_auth_failed in each client format, its cause in the log, no secret', async () => {
    let fail = true
    const token = jwt(3600, 'after-recovery')
    const chain = await withProvider(
      async () => {
        if (fail) throw new Error('AADSTS7000215: Invalid client secret provided: hunter2-secret')
        return token
      },
      new Set([token]),
    )
    for (const client of CLIENTS) {
      const res = await client.ask(chain.url, 'gpt-az')
      expect(res.status, client.name).toBeGreaterThanOrEqual(502)
      expect(client.errorMessage(res)).toContain('could not authenticate with the upstream')
    }
    expect((await chat.ask(chain.url, 'gpt-az')).json.error.code).toBe('upstream_auth_failed')
    expect(chain.mock.requests).toHaveLength(0)
    const failed = chain.logs.filter((line) => line.meta?.code === 'upstream_auth_failed')
    expect(failed.length).toBeGreaterThanOrEqual(CLIENTS.length)
    expect(failed[0]?.meta).toMatchObject({ upstream: 'az', cause: 'token_provider_failed' })
    expect(JSON.stringify(chain.logs)).not.toMatch(/hunter2|AADSTS/)

    // The next call asks again: a provider that was down for a moment does not stay down for the gateway.
    fail = false
    expect((await chat.ask(chain.url, 'gpt-az')).status).toBe(200)
    expect(JSON.stringify(chain.logs)).not.toContain(token)
  })

  it('a token already expired (a clock off) is never sent; one the upstream refuses is the operator’s 502 too', async () => {
    const stale = await withProvider(async () => jwt(-600, 'stale'), new Set())
    const res = await chat.ask(stale.url, 'gpt-az')
    expect(res.status).toBe(502)
    expect(stale.mock.requests).toHaveLength(0)
    expect(stale.logs.find((line) => line.meta?.code === 'upstream_auth_failed')?.meta?.cause).toBe('token_expired')

    const refusedToken = jwt(3600, 'not-for-this-resource')
    const refused = await withProvider(async () => refusedToken, new Set())
    const answer = await chat.ask(refused.url, 'gpt-az')
    expect(answer.status).toBe(502)
    expect(answer.json.error.code).toBe('upstream_auth_failed')
    expect(refused.mock.requests).toHaveLength(1)
    expect(refused.logs.some((line) => line.level === 'error' && line.meta?.status === 401)).toBe(true)
    expect(JSON.stringify(refused.logs)).not.toContain(refusedToken)
  })
})

describe('Azure options', () => {
  const base = { models: [{ id: 'm', upstream: 'az' }], auth: { apiKeys: [KEY_A] }, logger: { warn: () => {}, error: () => {} } }
  const create = (az: Record<string, unknown>) => createGateway({ ...base, upstreams: { az: { type: 'azure', ...az } } } as GatewayOptions)

  it('builds the v1 base URL from resource', () => {
    expect(azure.baseUrlFrom?.('az', { resource: 'contoso-eu', apiKey: AZURE_KEY })).toBe('https://contoso-eu.openai.azure.com/openai/v1')
    expect(() => create({ resource: 'contoso-eu', apiKey: AZURE_KEY })).not.toThrow()
  })

  it('refuses what cannot work, naming the option', () => {
    const url = 'https://contoso.openai.azure.com/openai/v1'
    const provider = async () => 'token'
    expect(() => create({ apiKey: AZURE_KEY })).toThrow(/upstreams\.az needs baseUrl .* or resource/)
    expect(() => create({ baseUrl: url, resource: 'contoso', apiKey: AZURE_KEY })).toThrow(/takes baseUrl or resource, not both/)
    expect(() => create({ baseUrl: url, apiKey: AZURE_KEY, tokenProvider: provider })).toThrow(
      /apiKey \(or apiKeys\) or tokenProvider, not both/,
    )
    expect(() => create({ baseUrl: url })).toThrow(/needs apiKey, apiKeys or tokenProvider/)
    expect(() => create({ baseUrl: url, tokenProvider: 'token' })).toThrow(/tokenProvider must be a function/)
    expect(() => create({ baseUrl: url, apiKey: AZURE_KEY, apiVersion: 'latest' })).toThrow(/apiVersion must be an Azure API version/)
    expect(() => create({ resource: 'contoso.openai.azure.com', apiKey: AZURE_KEY })).toThrow(/resource must be an Azure resource name/)
    expect(() => create({ baseUrl: `${url}/chat/completions`, apiKey: AZURE_KEY })).toThrow(
      /did you mean 'https:\/\/contoso\.openai\.azure\.com\/openai\/v1'/,
    )
    expect(() => create({ baseUrl: url, apiKey: AZURE_KEY, anthropicVersion: '2023-06-01' })).toThrow(
      /anthropicVersion is an option of type 'anthropic'/,
    )
    // Options of Azure upstreams only.
    expect(() =>
      createGateway({
        ...base,
        upstreams: { az: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'k', apiVersion: '2024-10-21' } },
      } as GatewayOptions),
    ).toThrow(/apiVersion is an option of type 'azure' upstreams only/)
  })
})
