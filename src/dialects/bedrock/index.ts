// `type: 'bedrock'`: AWS Bedrock's runtime, signed with SigV4 (or a Bedrock API key), streams as AWS event streams.
// An upstream type whose models take different APIs: Anthropic's models speak Messages through InvokeModel
// (`anthropic.ts`); every other model speaks Converse (`converse/`). `forModel` picks each model's.
import type { Dialect } from '../dialect.js'
import { bedrockAnthropic } from './anthropic.js'

/** Whether a Bedrock model id (a foundation model, a cross-region profile `us.anthropic…`, an ARN) is one of Anthropic's. */
export const isAnthropicModel = (upstreamModel: string): boolean => upstreamModel.includes('anthropic.')

/** The Bedrock upstream type: it serves no client paths; its models' dialects do the calls. */
export const bedrock: Dialect = {
  ...bedrockAnthropic,
  passthroughOf: undefined,
  forModel: (upstreamModel) => (isAnthropicModel(upstreamModel) ? bedrockAnthropic : undefined),
  upstreamModelProblem: (name) =>
    isAnthropicModel(name) ? undefined : "names no Anthropic model ('anthropic.' in its id): only Claude is served on Bedrock so far",
}
