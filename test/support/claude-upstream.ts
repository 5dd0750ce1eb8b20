// A minimal Anthropic Messages upstream for the translation tests, until the mock upstream speaks Messages: it
// checks what Anthropic checks (its key in `x-api-key`, an `anthropic-version`, the required `max_tokens`, and the
// signed thinking block a tool loop must send back), answers a message whole or as a short event stream, and
// records every request.
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { isObject } from '../../src/json/value.js'
import { listen, type MountedServer } from './http.js'

/** The signature of the thinking block this upstream writes before a tool call, which must come back with the call. */
export const CLAUDE_SIGNATURE = 'sig-claude-mock-1'
/** The id of the tool call this upstream makes. */
export const CLAUDE_CALL_ID = 'toolu_mock_1'
/** The usage of every answer: the prompt read partly from the cache and partly written to it. */
export const CLAUDE_USAGE = { input_tokens: 10, cache_creation_input_tokens: 3, cache_read_input_tokens: 5, output_tokens: 7 }

/** One request the upstream received, its body parsed. */
export interface ClaudeRequest {
  path: string
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
}

/** The running upstream. */
export interface ClaudeUpstream extends MountedServer {
  requests: ClaudeRequest[]
}

type Block = Record<string, unknown>

function fail(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_mock' }))
}

/** The text of a message's content: a string, or its text blocks and tool results joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((block: Block) => (block.type === 'text' ? block.text : block.type === 'tool_result' ? textOf(block.content) : ''))
    .join('')
}

/** Why a tool loop would be refused: the call this upstream made came back without the thinking block before it. */
function lostThinking(messages: Block[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue
    const blocks = message.content as Block[]
    if (!blocks.some((block) => block.type === 'tool_use' && block.id === CLAUDE_CALL_ID)) continue
    const first = blocks[0]
    if (first?.type !== 'thinking' || first.signature !== CLAUDE_SIGNATURE)
      return 'messages: the assistant message with the tool use must start with its thinking block, as it was sent'
  }
  return undefined
}

/** The answer's content: the tool result quoted, a call of the first tool (after signed thinking), or the echo. */
function answer(body: Record<string, unknown>): { content: Block[]; stop: string } {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Block[]
  const last = messages.at(-1)
  const lastText = textOf(last?.content)
  const results = Array.isArray(last?.content) && (last.content as Block[]).some((block) => block.type === 'tool_result')
  if (results) return { content: [{ type: 'text', text: `Tool said: ${lastText}` }], stop: 'end_turn' }
  const tools = (Array.isArray(body.tools) ? body.tools : []) as Block[]
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined
  const tool = tools[0]
  if (tool && choice !== 'none') {
    return {
      content: [
        { type: 'thinking', thinking: 'The user wants the weather: call the tool.', signature: CLAUDE_SIGNATURE },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: CLAUDE_CALL_ID, name: tool.name, input: { city: 'Paris' } },
      ],
      stop: 'tool_use',
    }
  }
  return { content: [{ type: 'text', text: `Echo: ${lastText}` }], stop: 'end_turn' }
}

function event(res: ServerResponse, data: Block): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
}

/** The answer as Anthropic streams it: each block opened, filled in two deltas where it can be, and stopped. */
function stream(res: ServerResponse, message: Block, content: Block[], stop: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_mock' })
  const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = CLAUDE_USAGE
  const start = { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens: 1 }
  event(res, { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: start } })
  content.forEach((block, index) => {
    const opened =
      block.type === 'text'
        ? { type: 'text', text: '' }
        : block.type === 'thinking'
          ? { type: 'thinking', thinking: '', signature: '' }
          : { ...block, input: {} }
    event(res, { type: 'content_block_start', index, content_block: opened })
    if (index === 0) event(res, { type: 'ping' })
    const delta = (d: Block) => event(res, { type: 'content_block_delta', index, delta: d })
    if (block.type === 'text') {
      const text = String(block.text)
      delta({ type: 'text_delta', text: text.slice(0, 4) })
      delta({ type: 'text_delta', text: text.slice(4) })
    } else if (block.type === 'thinking') {
      delta({ type: 'thinking_delta', thinking: block.thinking })
      delta({ type: 'signature_delta', signature: block.signature })
    } else {
      const json = JSON.stringify(block.input)
      delta({ type: 'input_json_delta', partial_json: json.slice(0, 5) })
      delta({ type: 'input_json_delta', partial_json: json.slice(5) })
    }
    event(res, { type: 'content_block_stop', index })
  })
  event(res, {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: CLAUDE_USAGE.output_tokens },
  })
  event(res, { type: 'message_stop' })
  res.end()
}

/** Starts the upstream on a loopback port; it takes `key` alone. */
export async function startClaudeUpstream(key: string): Promise<ClaudeUpstream> {
  const requests: ClaudeRequest[] = []
  const server = await listen(
    http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>
        requests.push({ path: req.url ?? '', headers: req.headers, body })
        if (req.method !== 'POST' || req.url !== '/v1/messages') return fail(res, 404, 'not_found_error', 'Not found')
        if (req.headers['x-api-key'] !== key) return fail(res, 401, 'authentication_error', 'invalid x-api-key')
        if (typeof req.headers['anthropic-version'] !== 'string')
          return fail(res, 400, 'invalid_request_error', 'anthropic-version: header is required')
        if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
          return fail(res, 400, 'invalid_request_error', 'max_tokens: Field required')
        const lost = lostThinking((Array.isArray(body.messages) ? body.messages : []) as Block[])
        if (lost) return fail(res, 400, 'invalid_request_error', lost)
        const { content, stop } = answer(body)
        const message = { id: `msg_mock_${requests.length}`, type: 'message', role: 'assistant', model: body.model }
        if (body.stream === true) return stream(res, message, content, stop)
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_mock' })
        res.end(JSON.stringify({ ...message, content, stop_reason: stop, stop_sequence: null, usage: CLAUDE_USAGE }))
      })
    }),
  )
  return { ...server, requests }
}
