import { chatErrorFromHub } from '../chat-completions/response.js'
import type { ClientFormat } from '../format.js'
import { responsesRequestToHub } from './request.js'
import { responsesResponseFromHub } from './response.js'
import { ResponsesStreamEncoder } from './stream.js'

/** OpenAI's Responses format, as a client speaks it: requests read, answers and stream events written. */
export const responsesFormat: ClientFormat = {
  requestToHub: responsesRequestToHub,
  responseFromHub: responsesResponseFromHub,
  // Responses errors have chat completions' shape: `{ error: { message, type, param, code } }`.
  errorFromHub: chatErrorFromHub,
  streamEncoder: (plan) => new ResponsesStreamEncoder(plan),
}
