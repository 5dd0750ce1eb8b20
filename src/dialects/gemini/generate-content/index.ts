import type { WireFormat } from '../../../translate/format.js'
import { geminiRequestFromHub, geminiRequestToHub } from './request.js'
import { geminiErrorFromHub, geminiErrorToHub, geminiResponseFromHub, geminiResponseToHub } from './response.js'
import { GeminiStreamDecoder, GeminiStreamEncoder } from './stream.js'

/** The generate-content format's readers and writers. */
export const generateContentFormat: WireFormat = {
  requestToHub: (body) => geminiRequestToHub(body),
  requestFromHub: geminiRequestFromHub,
  responseToHub: geminiResponseToHub,
  responseFromHub: geminiResponseFromHub,
  errorToHub: geminiErrorToHub,
  errorFromHub: geminiErrorFromHub,
  streamDecoder: (plan) => new GeminiStreamDecoder(plan),
  streamEncoder: (plan) => new GeminiStreamEncoder(plan),
}
