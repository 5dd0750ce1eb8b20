// The Responses API's WebSocket mode as the gateway serves it: a `response.create` frame carries the create body
// (without `stream` and `background`, which a socket decides), `previous_response_id` continues the socket's last
// response with only the new input items, `generate: false` warms a socket up, and errors are frames in the Responses
// error shape.
import { GatewayError, invalidField } from '../../../errors.js'
import type { SocketCreate, SocketErrorFacts, WebSocketFormat } from '../../websocket-format.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The one message a string `input` stands for, as the Responses API reads it. */
const asItems = (input: unknown): unknown[] =>
  typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : (input as unknown[])

function read(frame: unknown): SocketCreate {
  if (!isObject(frame)) throw new GatewayError('invalid_request', 'A frame must be one JSON object.')
  if (frame.type !== 'response.create') {
    invalidField('type', `Unsupported frame type '${String(frame.type).slice(0, 64)}'; this socket takes 'response.create'.`)
  }
  // The frame's own fields, and what a socket decides (every response streams back as frames): not the create body.
  const { type: _, generate, stream: __, previous_response_id: previous, input, ...request } = frame
  if (request.background === true)
    invalidField('background', 'Background responses are not created over a WebSocket; use POST /v1/responses.')
  if (input !== undefined && typeof input !== 'string' && !Array.isArray(input))
    invalidField('input', "'input' must be a string or an array of items.")
  if (previous !== undefined && previous !== null && typeof previous !== 'string') {
    invalidField('previous_response_id', "'previous_response_id' must be a string.")
  }
  if (generate !== undefined && typeof generate !== 'boolean') invalidField('generate', "'generate' must be a boolean.")
  return {
    request,
    input: input === undefined ? [] : asItems(input),
    previousId: typeof previous === 'string' ? previous : undefined,
    warmUp: generate === false,
  }
}

/** A `Response` the gateway answers itself (a warm-up), from the request. */
function response(id: string, request: Json, createdAt: number, status: string): Json {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    model: request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    store: request.store !== false,
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    usage: null,
    metadata: isObject(request.metadata) ? request.metadata : {},
  }
}

/** A response as the socket shows it: the gateway runs and keeps it as a background response, which the client asked for neither. */
function shown(object: Json, create: SocketCreate): Json {
  return { ...object, background: false, store: create.request.store !== false, previous_response_id: create.previousId ?? null }
}

/** The events that carry the `Response` object itself (the deltas do not, and go out untouched). */
const CARRIES_RESPONSE =
  /^\{"type":"response\.(?:created|in_progress|queued|completed|incomplete|failed)","sequence_number":\d+,"response":/

/** The Responses API's WebSocket mode (`GET /v1/responses` with `Upgrade: websocket`). */
export const responsesWebSocket: WebSocketFormat = {
  read,
  withInput: (request, input) => ({ ...request, input }),
  warmUpEvents(id, request, createdAt) {
    const completed = response(id, request, createdAt, 'completed')
    return [
      { type: 'response.created', response: { ...completed, status: 'in_progress' } },
      { type: 'response.completed', response: completed },
    ]
  },
  frameOf(data, create) {
    if (!CARRIES_RESPONSE.test(data)) return data
    const event = JSON.parse(data) as { response: Json }
    event.response = shown(event.response, create)
    return JSON.stringify(event)
  },
  shown,
  outputOf: (object) => (Array.isArray(object.output) ? object.output : []),
  errorFrame: ({ status, code, message, param }: SocketErrorFacts) => ({
    type: 'error',
    status,
    error: { type: status >= 500 ? 'server_error' : 'invalid_request_error', code, message, param: param ?? null },
  }),
}
