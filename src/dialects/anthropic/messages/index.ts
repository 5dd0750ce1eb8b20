// PLACEHOLDER (not for main): the Messages format's hub reader and writer are being written.
import type { WireFormat } from '../../../translate/format.js'
import { refuse } from '../../../translate/readers.js'

const notYet = (): never => refuse('', 'Messages translation is not built yet.')

/** The Messages format's readers and writers. */
export const messagesFormat: WireFormat = {
  requestToHub: notYet,
  requestFromHub: notYet,
  responseToHub: notYet,
  responseFromHub: notYet,
  errorToHub: notYet,
  errorFromHub: notYet,
  streamDecoder: notYet,
  streamEncoder: notYet,
}
