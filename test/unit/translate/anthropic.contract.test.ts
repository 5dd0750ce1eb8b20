import { messagesFormat } from '../../../src/dialects/anthropic/messages/index.js'
import { describeHubContract } from './hub-contract.js'

describeHubContract('anthropic', {
  clientFormats: [messagesFormat],
  upstreamFormat: messagesFormat,
  fixtures: new URL('../../../src/dialects/anthropic/__fixtures__/', import.meta.url),
})
