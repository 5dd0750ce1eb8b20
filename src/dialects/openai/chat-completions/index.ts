import type { WireFormat } from '../../../translate/format.js'
import { chatRequestFromHub, chatRequestToHub } from './request.js'
import { chatErrorFromHub, chatErrorToHub, chatResponseFromHub, chatResponseToHub } from './response.js'
import { ChatStreamDecoder, ChatStreamEncoder } from './stream.js'

/** The chat-completions format's readers and writers. */
export const chatCompletionsFormat: WireFormat = {
  requestToHub: (body) => chatRequestToHub(body),
  requestFromHub: chatRequestFromHub,
  responseToHub: (body) => chatResponseToHub(body),
  responseFromHub: chatResponseFromHub,
  errorToHub: chatErrorToHub,
  errorFromHub: chatErrorFromHub,
  streamDecoder: () => new ChatStreamDecoder(),
  streamEncoder: (plan) => new ChatStreamEncoder(plan),
}
