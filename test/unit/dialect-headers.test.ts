import { describe, expect, it } from 'vitest'
import { UpstreamBodies } from '../../src/call/upstream-bodies.js'
import { resolveOptions } from '../../src/config/resolve.js'
import { anthropic, chatCompletions, type Dialect, messages, type OperationFormat, openai } from '../../src/dialects/index.js'
import { type GatewayError, isGatewayError } from '../../src/errors.js'
import type { GatewayOptions, UpstreamOptions } from '../../src/types.js'

const BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14'

/** The configuration of these tests, with `claude`'s upstream options replaced by `claude`. */
function optionsWith(claude: Partial<UpstreamOptions> = {}) {
  return resolveOptions({
    upstreams: {
      claude: { type: 'anthropic', baseUrl: 'https://api.anthropic.example', apiKey: 'sk-ant-upstream', ...claude },
      gpt: { type: 'openai', baseUrl: 'https://api.openai.example/v1', apiKey: 'sk-upstream' },
    },
    models: [
      { id: 'claude-sonnet-4-5', upstream: 'claude', fallbacks: ['gpt-4o'] },
      { id: 'gpt-4o', upstream: 'gpt', fallbacks: ['claude-sonnet-4-5'] },
    ],
    auth: { apiKeys: ['sk-client'] },
  } as GatewayOptions)
}

/** The bodies of a call of `format` from a client of `inbound` that sent `clientHeaders`, for model `id`. */
function bodiesOf(
  options: ReturnType<typeof optionsWith>,
  call: { inbound: Dialect; format: OperationFormat; id: string },
  clientHeaders = {},
) {
  const model = options.models.get(call.id)!
  const bytes = Buffer.from(JSON.stringify({ model: call.id, max_tokens: 8, messages: [] }))
  const body = { bytes, fields: JSON.parse(bytes.toString()), value: undefined, spans: undefined }
  return new UpstreamBodies({ requestId: 'r', format: call.format, inbound: call.inbound, body, model, stream: false, clientHeaders })
}

/** The names of a flat header list, in order. */
const names = (headers: readonly string[]) => headers.filter((_, i) => i % 2 === 0)

function refusal(claude: Record<string, unknown>, type: 'anthropic' | 'openai' = 'anthropic'): string {
  try {
    optionsWith({ type, ...claude } as Partial<UpstreamOptions>)
  } catch (error) {
    if (isGatewayError(error)) return `${(error as GatewayError).code}: ${error.message}`
    throw error
  }
  throw new Error('the options were accepted')
}

describe('upstream option anthropicVersion', () => {
  it("is sent as anthropic-version, '2023-06-01' unless set", () => {
    expect(optionsWith().upstreams.get('claude')?.dialectHeaders).toEqual({
      forwarded: ['anthropic-version', 'anthropic-beta'],
      own: ['anthropic-version', '2023-06-01'],
    })
    expect(optionsWith({ anthropicVersion: '2026-10-21' }).upstreams.get('claude')?.dialectHeaders.own).toEqual([
      'anthropic-version',
      '2026-10-21',
    ])
  })

  it('is refused for an upstream of another type, and when it is not a date', () => {
    expect(refusal({ anthropicVersion: '2023-06-01' }, 'openai')).toBe(
      "invalid_options: upstreams.claude.anthropicVersion is an option of type 'anthropic' upstreams only",
    )
    for (const version of ['latest', '2023-6-1', '2023-02-30', 20230601, '2023-06-01T00:00:00Z']) {
      expect(refusal({ anthropicVersion: version })).toMatch(
        /^invalid_options: upstreams\.claude\.anthropicVersion must be an Anthropic API version/,
      )
    }
  })

  it('names itself when misspelt', () => {
    expect(refusal({ anthropicVerison: '2023-06-01' })).toMatch(/did you mean `anthropicVersion`/)
  })

  it('cannot be set twice: as the option and as a configured header', () => {
    expect(refusal({ anthropicVersion: '2023-06-01', headers: { 'Anthropic-Version': '2023-06-01' } })).toMatch(
      /sets anthropic-version twice/,
    )
  })
})

describe('the dialect headers of each attempt', () => {
  const options = optionsWith()
  const claude = options.models.get('claude-sonnet-4-5')!
  const gpt = options.models.get('gpt-4o')!

  it("forwards an Anthropic client's version and betas to an Anthropic upstream as they came, and nothing else", () => {
    const bodies = bodiesOf(
      options,
      { inbound: anthropic, format: messages, id: claude.id },
      {
        'anthropic-version': '2026-10-21',
        'anthropic-beta': BETAS,
        'x-api-key': 'sk-client',
        authorization: 'Bearer sk-client',
        'anthropic-dangerous-direct-browser-access': 'true',
      },
    )
    expect(bodies.headersFor(claude)).toEqual(['anthropic-version', '2026-10-21', 'anthropic-beta', BETAS])
  })

  it('sends the configured version to an Anthropic upstream when the client sent none: always exactly one', () => {
    const bodies = bodiesOf(options, { inbound: anthropic, format: messages, id: claude.id }, { 'anthropic-beta': BETAS })
    expect(bodies.headersFor(claude)).toEqual(['anthropic-beta', BETAS, 'anthropic-version', '2023-06-01'])
    expect(bodiesOf(options, { inbound: anthropic, format: messages, id: claude.id }).headersFor(claude)).toEqual([
      'anthropic-version',
      '2023-06-01',
    ])
  })

  it("forwards a spoken body's headers in place of the client's own of those names (InvokeModel's betas)", () => {
    const model = options.models.get(claude.id)!
    const bytes = Buffer.from(JSON.stringify({ model: claude.id, max_tokens: 8, messages: [] }))
    const body = { bytes, fields: JSON.parse(bytes.toString()), value: undefined, spans: undefined }
    const bodies = new UpstreamBodies({
      requestId: 'r',
      format: messages,
      inbound: anthropic,
      body,
      model,
      stream: false,
      clientHeaders: { 'anthropic-beta': 'client-beta', 'anthropic-version': '2026-10-21' },
      spokenHeaders: { 'anthropic-beta': `client-beta,${BETAS}` },
    })
    expect(bodies.headersFor(claude)).toEqual(['anthropic-version', '2026-10-21', 'anthropic-beta', `client-beta,${BETAS}`])
  })

  it('sends a translated call the configured version and no beta, and a fallback across dialects its own', () => {
    const fromOpenAI = bodiesOf(options, { inbound: openai, format: chatCompletions, id: gpt.id }, { 'anthropic-beta': BETAS })
    expect(fromOpenAI.headersFor(gpt)).toEqual([])
    expect(fromOpenAI.headersFor(claude)).toEqual(['anthropic-version', '2023-06-01'])
    const fromAnthropic = bodiesOf(options, { inbound: anthropic, format: messages, id: claude.id }, { 'anthropic-beta': BETAS })
    expect(fromAnthropic.headersFor(gpt)).toEqual([])
  })

  it('leaves a header configured in `headers` to the configuration, so it is never sent twice', () => {
    const configured = optionsWith({ headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })
    const model = configured.models.get(claude.id)!
    const bodies = bodiesOf(
      configured,
      { inbound: anthropic, format: messages, id: claude.id },
      {
        'anthropic-version': '2023-06-01',
        'anthropic-beta': BETAS,
      },
    )
    expect(names(bodies.headersFor(model))).toEqual(['anthropic-version'])
    expect(model.upstream.requestHeaders).toContain('anthropic-beta')
  })
})
