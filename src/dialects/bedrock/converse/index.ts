// Every Bedrock model but Claude through Converse / ConverseStream (`/model/{id}/converse`, `/converse-stream`):
// Nova, Llama, Mistral, DeepSeek, gpt-oss… Calls of every client dialect are translated to it through the hub.
import { isObject } from '../../../json/value.js'
import { tokenCounts } from '../../../translate/hub.js'
import type { Operation } from '../../../types.js'
import type { UpstreamErrorReader } from '../../../upstream/authorize.js'
import type { Dialect, StreamUsageReader } from '../../dialect.js'
import { converseCountFormat, isCount } from '../count.js'
import { errorMessage, errorType, headerType, refusalCause, statusOfType } from '../errors.js'
import { type EventFrame, eventStreamFraming } from '../event-stream.js'
import { converseRequestFromHub } from './request.js'
import { converseErrorToHub, converseResponseToHub, finishOf, usageOf } from './response.js'
import { ConverseStreamDecoder } from './stream.js'

/** A Converse error body as the Converse reader takes it: Bedrock's message, with its type. */
const errors: UpstreamErrorReader = {
  status: (status, headers) => statusOfType(headerType(headers), status),
  body: (_status, headers, body) => Buffer.from(JSON.stringify({ message: errorMessage(body), type: headerType(headers) })),
  cause: refusalCause,
}

/** One ConverseStream frame as SSE: the event under its type, an exception as `exception` with its status. */
function writeFrame(frame: EventFrame): string {
  if (frame.messageType === 'event') return `event: ${frame.type}\ndata: {${JSON.stringify(frame.type)}:${frame.payload}}\n\n`
  const type = errorType(frame.type)
  const exception = { type, status: statusOfType(type, 500), message: errorMessage(frame.payload) }
  return `event: exception\ndata: ${JSON.stringify({ exception })}\n\n`
}

/** The usage of a Converse answer, or of a stream's `metadata` event. */
function usage(body: unknown) {
  if (!isObject(body)) return undefined
  const found = usageOf(body.usage ?? (isObject(body.metadata) ? body.metadata.usage : undefined))
  return found && tokenCounts(found)
}

/** A stream's usage: all of it in its `metadata` event, near its end. */
function streamUsage(): StreamUsageReader {
  let found: ReturnType<typeof usage>
  return {
    event(event) {
      found ??= usage(event)
    },
    get complete() {
      return found !== undefined
    },
    usage: () => found,
  }
}

/** The members of the Converse API's dialect; the Bedrock dialect adds what every Bedrock API shares. */
export const converseMembers = {
  upstreamFormat: {
    requestFromHub: converseRequestFromHub,
    responseToHub: converseResponseToHub,
    errorToHub: converseErrorToHub,
    streamDecoder: () => new ConverseStreamDecoder(),
  },
  // Converse is a chat: its calls count as Messages' (`gen_ai.operation.name` `chat`).
  translatedOperation: 'messages',
  usageField: 'usage',
  usage,
  streamUsage,
  finishReasonField: 'stopReason',
  finishReasons: (response: unknown, reasons: string[]) => {
    if (!isObject(response)) return
    const stop = response.stopReason ?? (isObject(response.messageStop) ? response.messageStop.stopReason : undefined)
    const finish = finishOf(stop)
    if (finish?.native !== undefined && finish.native.length <= 64) reasons[0] = finish.native
  },
  // A count of another format (an Anthropic client's) in CountTokens' Converse form.
  countingApi: { format: converseCountFormat, operation: 'bedrock.countTokens' },
  upstreamPath: (basePath: string, upstreamModel: string, operation: Operation, stream: boolean) =>
    `${basePath}/model/${encodeURIComponent(upstreamModel)}/${isCount(operation) ? 'count-tokens' : stream ? 'converse-stream' : 'converse'}`,
  upstreamFraming: (_operation: unknown, options: Readonly<Record<string, string>>) => eventStreamFraming(writeFrame, options),
  upstreamErrors: errors,
} satisfies Partial<Dialect>
