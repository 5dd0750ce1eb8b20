import { generateContentFormat } from '../../../src/dialects/gemini/generate-content/index.js'
import { describeHubContract } from './hub-contract.js'

describeHubContract('gemini', {
  clientFormats: [generateContentFormat],
  upstreamFormat: generateContentFormat,
  fixtures: new URL('../../../src/dialects/gemini/__fixtures__/', import.meta.url),
})
