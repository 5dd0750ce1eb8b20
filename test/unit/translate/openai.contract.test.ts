import { chatCompletionsFormat } from '../../../src/dialects/openai/chat-completions/index.js'
import { responsesFormat } from '../../../src/dialects/openai/responses/index.js'
import { describeHubContract } from './hub-contract.js'

describeHubContract('openai', {
  clientFormats: [chatCompletionsFormat, responsesFormat],
  upstreamFormat: chatCompletionsFormat,
  otherUpstreams: [{ api: 'responses' }],
  fixtures: new URL('../../../src/dialects/openai/__fixtures__/', import.meta.url),
})
