// `POST /v1/messages/count_tokens` as the client's side of a translated token count: the body is a Messages request
// without `max_tokens`, the answer `{ input_tokens }`.
import type { ClientFormat } from '../../../translate/format.js'
import { messagesFormat } from './index.js'
import { messagesRequestToHub } from './request.js'

/** The count-tokens format's reader and writer, for a model whose upstream counts tokens its own way. */
export const messagesCountFormat: ClientFormat = {
  requestToHub(body) {
    // A count has no output limit: the message reader requires one, and it changes no input token.
    const hub = messagesRequestToHub({ ...body, max_tokens: 1 })
    hub.maxOutputTokens = undefined
    return hub
  },
  responseFromHub: (hub) => ({ input_tokens: hub.usage?.input ?? 0 }),
  errorFromHub: messagesFormat.errorFromHub,
  streamEncoder: messagesFormat.streamEncoder,
}
