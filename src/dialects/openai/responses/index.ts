import { parseJsonInSlices } from '../../../json/parse-in-slices.js'
import { isObject } from '../../../json/value.js'
import { ASSEMBLE_SLICE_BYTES } from '../../../translate/assemble.js'
import type { WireFormat } from '../../../translate/format.js'
import { parseJson } from '../../../translate/readers.js'
import { chatErrorFromHub, chatErrorToHub } from '../chat-completions/response.js'
import { responsesRequestToHub } from './request.js'
import { responsesResponseFromHub } from './response.js'
import { ResponsesStreamEncoder } from './stream.js'
import { responsesRequestFromHub } from './upstream-request.js'
import { responsesResponseToHub } from './upstream-response.js'
import { ResponsesStreamDecoder } from './upstream-stream.js'

/**
 * OpenAI's Responses format, both sides: a client's requests read and answers written, and for an upstream with
 * `api: 'responses'` another dialect's calls written and their answers read.
 */
export const responsesFormat: WireFormat = {
  requestToHub: responsesRequestToHub,
  responseFromHub: responsesResponseFromHub,
  // Responses errors have chat completions' shape: `{ error: { message, type, param, code } }`.
  errorFromHub: chatErrorFromHub,
  streamEncoder: (plan) => new ResponsesStreamEncoder(plan),
  assembleStream: lastResponse,
  assembleStreamInSlices: lastResponseInSlices,
  requestFromHub: responsesRequestFromHub,
  responseToHub: (body) => responsesResponseToHub(body),
  errorToHub: chatErrorToHub,
  streamDecoder: () => new ResponsesStreamDecoder(),
}

/** Event types that end a Responses stream carrying the whole `response`. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/** The whole `response` a Responses stream ends with, or undefined for a stream cut before it. */
function lastResponse(data: readonly string[]): object | undefined {
  for (let i = data.length - 1; i >= 0; i--) {
    const response = finalResponse(parseJson(data[i] as string))
    if (response) return response
  }
  return undefined
}

/** The whole `response` of a final event, or undefined for any other event. */
function finalResponse(event: unknown): object | undefined {
  return isObject(event) && typeof event.type === 'string' && FINAL_EVENTS.has(event.type) && isObject(event.response)
    ? event.response
    : undefined
}

/**
 * `lastResponse` with turns of the event loop between slices: the final event holds the whole answer, which in a
 * kept stream can be tens of megabytes, so it is parsed a slice at a time too.
 */
async function lastResponseInSlices(data: readonly string[]): Promise<object | undefined> {
  let sinceTurn = 0
  for (let i = data.length - 1; i >= 0; i--) {
    const text = data[i] as string
    const response = finalResponse(await parseJsonInSlices(text))
    if (response) return response
    sinceTurn += text.length
    if (sinceTurn >= ASSEMBLE_SLICE_BYTES) {
      sinceTurn = 0
      await new Promise(setImmediate)
    }
  }
  return undefined
}
