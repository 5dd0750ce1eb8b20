import { describe, expect, it } from 'vitest'
import { UpstreamBodies } from '../../src/call/upstream-bodies.js'
import { resolveOptions } from '../../src/config/resolve.js'
import {
  anthropic,
  chatCompletions,
  type Dialect,
  messages,
  messagesCountTokens,
  type OperationFormat,
  openai,
} from '../../src/dialects/index.js'
import { MOCK_AWS_CREDENTIALS } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'

const BETA = 'interleaved-thinking-2025-05-14'

// Claude on both clouds, and a second Vertex AI Claude model a call falls back to.
const options = resolveOptions({
  upstreams: {
    gcp: { type: 'vertex', apiKey: 'express-key-0123', project: 'my-project', location: 'us-east5' },
    aws: { type: 'bedrock', region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS },
  },
  models: [
    { id: 'claude-gcp', upstream: 'gcp', upstreamModel: 'claude-sonnet-4-5@20250929', fallbacks: ['claude-gcp-2'] },
    { id: 'claude-gcp-2', upstream: 'gcp', upstreamModel: 'claude-haiku-4-5@20251001' },
    { id: 'claude-aws', upstream: 'aws', upstreamModel: 'anthropic.claude-sonnet-4-5-20250929-v1:0' },
  ],
  auth: { apiKeys: ['sk-client'] },
} as GatewayOptions)

/** The body `id`'s upstream gets for a call of `format` from a client of `inbound` that sent `fields`. */
function bodyFor(call: { inbound: Dialect; format: OperationFormat; id: string; to?: string }, fields: Record<string, unknown>) {
  const model = options.models.get(call.id)!
  const bytes = Buffer.from(JSON.stringify(fields))
  const body = { bytes, fields, value: undefined, spans: undefined }
  const bodies = new UpstreamBodies({
    requestId: 'r',
    format: call.format,
    inbound: call.inbound,
    body,
    model,
    stream: false,
    clientHeaders: { 'anthropic-beta': BETA },
  })
  const out = bodies.for(options.models.get(call.to ?? call.id)!)
  if (!Buffer.isBuffer(out)) throw new Error(`refused: ${out.message}`)
  return JSON.parse(out.toString('utf8')) as Record<string, unknown>
}

const user = [{ role: 'user', content: 'hi' }]

describe("a cloud's Claude gets the body it takes from the call's bodies, passed through or translated", () => {
  it('Vertex AI: its version first, the model in the path only; a token count keeps it, renamed for a fallback', () => {
    const call = { inbound: anthropic, format: messages, id: 'claude-gcp' }
    const sent = { model: 'claude-gcp', max_tokens: 8, messages: user }
    expect(bodyFor(call, sent)).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 8, messages: user })
    expect(Object.keys(bodyFor({ ...call, to: 'claude-gcp-2' }, sent))[0]).toBe('anthropic_version')
    const count = { ...call, format: messagesCountTokens }
    expect(bodyFor({ ...count, to: 'claude-gcp-2' }, { model: 'claude-gcp', messages: user })).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      model: 'claude-haiku-4-5@20251001',
      messages: user,
    })
    const translated = bodyFor({ inbound: openai, format: chatCompletions, id: 'claude-gcp' }, { model: 'claude-gcp', messages: user })
    expect(translated).toMatchObject({ anthropic_version: 'vertex-2023-10-16', messages: [{ role: 'user' }] })
    expect(translated).not.toHaveProperty('model')
  })

  it("Bedrock: its version in, model and stream out, the client's betas in the body", () => {
    const sent = { model: 'claude-aws', max_tokens: 8, stream: false, messages: user }
    expect(bodyFor({ inbound: anthropic, format: messages, id: 'claude-aws' }, sent)).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 8,
      messages: user,
      anthropic_beta: [BETA],
    })
    const translated = bodyFor({ inbound: openai, format: chatCompletions, id: 'claude-aws' }, { model: 'claude-aws', messages: user })
    expect(translated).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', messages: [{ role: 'user' }] })
    expect(translated).not.toHaveProperty('model')
    expect(translated).not.toHaveProperty('anthropic_beta')
  })
})
