// Azure OpenAI upstreams on the mock, and one call of each client dialect (OpenAI chat and Responses, Gemini,
// Anthropic) with what its answer says: the text, a tool call, a finish reason, an error message.
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A } from './fixture.js'
import { call, type TestResponse } from './http.js'
import { NODE_KINDS } from './servers.js'

/** The `api-key` of the mock's Azure resource. */
export const AZURE_KEY = 'azure-resource-key-0123456789'

/** A JWT (unsigned: the mock and the gateway read only `exp`) that expires `seconds` from now, told apart by `id`. */
export const jwt = (seconds: number, id: string) =>
  ['{"alg":"none"}', JSON.stringify({ exp: Math.floor(Date.now() / 1000) + seconds, id })]
    .map((part) => Buffer.from(part).toString('base64url'))
    .join('.')
    .concat('.signature')

/** A gateway on loopback in front of the mock, with its logs. */
export interface AzureChain {
  url: string
  gateway: Gateway
  mock: MockUpstream
  logs: Array<{ level: string; message: string; meta?: Record<string, unknown> }>
  close(): Promise<void>
}

/** Starts a mock with Azure paths (the key, and the tokens `accepts` takes) and a gateway with these upstreams and models. */
export async function startAzureChain(
  upstreams: (mockUrl: string) => GatewayOptions['upstreams'],
  models: GatewayOptions['models'],
  accepts: (token: string) => boolean = () => false,
): Promise<AzureChain> {
  const mock = await startMockUpstream({ azure: { apiKey: AZURE_KEY, acceptsToken: accepts } })
  const logs: AzureChain['logs'] = []
  const line = (level: string) => (message: string, meta?: Record<string, unknown>) => logs.push({ level, message, meta })
  const gateway = createGateway({
    upstreams: upstreams(mock.url),
    models,
    auth: { apiKeys: [KEY_A] },
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
  })
  const server = await (NODE_KINDS[0] as (typeof NODE_KINDS)[number]).mount(gateway)
  return {
    url: server.url,
    gateway,
    mock,
    logs,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/** One client dialect: how it asks, and how its answers read. */
export interface ClientCase {
  name: string
  ask(url: string, model: string, options?: { text?: string; stream?: boolean; tool?: boolean }): Promise<TestResponse>
  /** The answer's text (a stream's deltas joined). */
  text(res: TestResponse): string
  /** The name of the tool the answer calls, if any. */
  toolCall(res: TestResponse): string | undefined
  /** The error message the client's format carries. */
  errorMessage(res: TestResponse): string
}

const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

/** The `data` of each SSE event, parsed (`[DONE]` left out). */
export function events(res: TestResponse): any[] {
  return res.text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)))
}

export const CLIENTS: ClientCase[] = [
  {
    name: 'OpenAI chat completions',
    ask: (url, model, { text = 'ping', stream = false, tool = false } = {}) =>
      call(`${url}/v1/chat/completions`, {
        headers: { authorization: `Bearer ${KEY_A}` },
        body: {
          model,
          stream,
          messages: [{ role: 'user', content: text }],
          ...(tool ? { tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER } }] } : {}),
        },
      }),
    text: (res) =>
      res.json
        ? (res.json.choices[0].message.content ?? '')
        : events(res)
            .map((e) => e.choices?.[0]?.delta?.content ?? '')
            .join(''),
    toolCall: (res) => res.json?.choices[0].message.tool_calls?.[0]?.function.name,
    errorMessage: (res) => res.json.error.message,
  },
  {
    name: 'OpenAI Responses',
    ask: (url, model, { text = 'ping', stream = false, tool = false } = {}) =>
      call(`${url}/v1/responses`, {
        headers: { authorization: `Bearer ${KEY_A}` },
        body: { model, stream, input: text, ...(tool ? { tools: [{ type: 'function', name: 'get_weather', parameters: WEATHER }] } : {}) },
      }),
    text: (res) =>
      res.json
        ? res.json.output
            .flatMap((item: any) => item.content ?? [])
            .map((part: any) => part.text ?? '')
            .join('')
        : events(res)
            .filter((e) => e.type === 'response.output_text.delta')
            .map((e) => e.delta)
            .join(''),
    toolCall: (res) => res.json?.output.find((item: any) => item.type === 'function_call')?.name,
    errorMessage: (res) => res.json.error.message,
  },
  {
    name: 'Gemini',
    ask: (url, model, { text = 'ping', stream = false, tool = false } = {}) =>
      call(`${url}/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, {
        headers: { 'x-goog-api-key': KEY_A },
        body: {
          contents: [{ role: 'user', parts: [{ text }] }],
          ...(tool ? { tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: WEATHER }] }] } : {}),
        },
      }),
    text: (res) =>
      (res.json ? [res.json] : events(res))
        .flatMap((e) => e.candidates?.[0]?.content?.parts ?? [])
        .map((part: any) => part.text ?? '')
        .join(''),
    toolCall: (res) => res.json?.candidates[0].content.parts.find((part: any) => part.functionCall)?.functionCall.name,
    errorMessage: (res) => res.json.error.message,
  },
  {
    name: 'Anthropic',
    ask: (url, model, { text = 'ping', stream = false, tool = false } = {}) =>
      call(`${url}/v1/messages`, {
        headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
        body: {
          model,
          stream,
          max_tokens: 256,
          messages: [{ role: 'user', content: text }],
          ...(tool ? { tools: [{ name: 'get_weather', input_schema: WEATHER }] } : {}),
        },
      }),
    text: (res) =>
      res.json
        ? res.json.content.map((block: any) => block.text ?? '').join('')
        : events(res)
            .filter((e) => e.type === 'content_block_delta')
            .map((e) => e.delta.text ?? '')
            .join(''),
    toolCall: (res) => res.json?.content.find((block: any) => block.type === 'tool_use')?.name,
    errorMessage: (res) => res.json.error.message,
  },
]
