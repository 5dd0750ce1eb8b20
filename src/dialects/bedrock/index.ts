// `type: 'bedrock'`: AWS Bedrock's runtime, signed with SigV4 (or a Bedrock API key), streams as AWS event streams.
// An upstream type whose models take different APIs: Anthropic's models speak Messages through InvokeModel
// (`anthropic.ts`); every other model speaks Converse (`converse/`). `forModel` picks each model's.
// Its client side: Bedrock-format clients call InvokeModel on the gateway (`client.ts`, served by that variant; the
// body and stream framing in `invoke.ts`) and list the models as inference profiles.
// The folder: anthropic.ts (Claude upstream), common.ts (what every Bedrock API shares upstream), converse/ (the
// Converse upstream), credentials.ts and sigv4.ts (signing), errors.ts (Bedrock's errors read), event-stream.ts
// (event streams read), event-frame.ts (event-stream frames written), options.ts (upstream options), types.ts,
// client.ts and invoke.ts (Bedrock-format clients), converse-client/ (Converse clients), client-errors.ts (their errors).
import type { Dialect } from '../dialect.js'
import { bedrockAnthropic } from './anthropic.js'
import { bedrockClientMembers, bedrockInvokeClient } from './client.js'
import { converseMembers } from './converse/index.js'
import { converseClientRoutes } from './converse-client/index.js'
import { bedrockInvoke } from './invoke.js'

/** Whether a Bedrock model id (a foundation model, a cross-region profile `us.anthropic…`, an ARN) is one of Anthropic's. */
export const isAnthropicModel = (upstreamModel: string): boolean => upstreamModel.includes('anthropic.')

/** How the 404 names the two InvokeModel routes. */
const INVOKE_LISTED = 'POST /model/{model}/{invoke|invoke-with-response-stream}'

/** The Bedrock upstream type's own members: Converse for every model but Claude, whose variant takes InvokeModel. */
const upstreamSide: Dialect<'bedrock'> = {
  ...bedrockAnthropic,
  ...converseMembers,
  ...bedrockClientMembers,
  name: 'bedrock',
  routes: [],
  speaks: undefined,
  passthroughBody: undefined,
  upstreamAnswer: undefined,
  forModel: (upstreamModel) => (isAnthropicModel(upstreamModel) ? bedrockAnthropic : undefined),
}

/**
 * The Bedrock upstream type, and the dialect of its models that speak Converse (every model but Claude; Claude's
 * variant takes Anthropic's Messages through InvokeModel). Its client paths are served by variants: InvokeModel's
 * (`client.ts`) speaks Anthropic's formats, Converse's (`converse-client/`) this dialect.
 */
export const bedrock: Dialect<'bedrock'> = {
  ...upstreamSide,
  routes: [
    // Listed as one entry, as the 404's list of what is served stays short.
    { path: '/model/{model}/invoke', format: bedrockInvoke, streams: false, dialect: bedrockInvokeClient, listed: INVOKE_LISTED },
    {
      path: '/model/{model}/invoke-with-response-stream',
      format: bedrockInvoke,
      streams: true,
      dialect: bedrockInvokeClient,
      listed: false,
    },
    ...converseClientRoutes(upstreamSide, () => bedrock),
  ],
}
