// `type: 'bedrock'`: AWS Bedrock's runtime, signed with SigV4 (or a Bedrock API key), streams as AWS event streams.
// An upstream type whose models take different APIs: Anthropic's models speak Messages through InvokeModel
// (`anthropic.ts`); every other model speaks Converse (`converse/`). `forModel` picks each model's.
import type { Dialect } from '../dialect.js'
import { bedrockAnthropic } from './anthropic.js'
import { converseMembers } from './converse/index.js'
import { converseClientRoutes } from './converse-client/index.js'

/** Whether a Bedrock model id (a foundation model, a cross-region profile `us.anthropic…`, an ARN) is one of Anthropic's. */
export const isAnthropicModel = (upstreamModel: string): boolean => upstreamModel.includes('anthropic.')

/** The Bedrock upstream type's own members: Converse for every model but Claude, whose variant takes InvokeModel. */
const upstreamSide: Dialect = {
  ...bedrockAnthropic,
  ...converseMembers,
  speaks: undefined,
  passthroughBody: undefined,
  forModel: (upstreamModel) => (isAnthropicModel(upstreamModel) ? bedrockAnthropic : undefined),
}

/**
 * The Bedrock upstream type, and the dialect of its models that speak Converse (every model but Claude; Claude's
 * variant takes Anthropic's Messages through InvokeModel). Its client paths are served by variants: Converse's
 * (`converse-client/`) speak this dialect.
 */
export const bedrock: Dialect = {
  ...upstreamSide,
  routes: [...converseClientRoutes(upstreamSide, () => bedrock)],
}
