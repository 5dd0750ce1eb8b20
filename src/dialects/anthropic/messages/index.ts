import type { WireFormat } from '../../../translate/format.js'
import { assembleMessage, assembleMessageInSlices } from './assemble.js'
import { messagesRequestFromHub, messagesRequestToHub } from './request.js'
import { messagesErrorFromHub, messagesErrorToHub, messagesResponseFromHub, messagesResponseToHub } from './response.js'
import { MessagesStreamDecoder, MessagesStreamEncoder } from './stream.js'

/** The Messages format's readers and writers. */
export const messagesFormat: WireFormat = {
  requestToHub: messagesRequestToHub,
  requestFromHub: messagesRequestFromHub,
  responseToHub: (body) => messagesResponseToHub(body),
  responseFromHub: messagesResponseFromHub,
  errorToHub: messagesErrorToHub,
  errorFromHub: messagesErrorFromHub,
  streamDecoder: () => new MessagesStreamDecoder(),
  streamEncoder: (plan) => new MessagesStreamEncoder(plan),
  // A kept stream's record is the message its events add up to, every member the upstream sent kept.
  assembleStream: assembleMessage,
  assembleStreamInSlices: assembleMessageInSlices,
}
