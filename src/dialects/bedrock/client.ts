// Bedrock-format clients (Claude Code in Bedrock mode, `@anthropic-ai/bedrock-sdk`, the AWS SDK's InvokeModel): the
// client variant of the Bedrock dialect that serves InvokeModel, speaking Anthropic's Messages. Its key is the
// caller's own (`x-api-key` or `Authorization: Bearer`, as `ANTHROPIC_CUSTOM_HEADERS` or `AWS_BEARER_TOKEN_BEDROCK`
// send it; nothing is signed), its errors Bedrock's (`{ message }` and `x-amzn-errortype`), and its model list the
// configured models as inference profiles (`GET /inference-profiles`, which Claude Code asks first, with no key).
import { anthropic } from '../anthropic/index.js'
import type { Dialect, ErrorFacts, ListedModel, RelayedError } from '../dialect.js'
import { bedrockErrorType } from './client-errors.js'
import { anthropicError } from './invoke.js'

/** Bedrock's type of an Anthropic error type where its status alone does not say it. */
const TYPE_BY_ANTHROPIC: Readonly<Record<string, string>> = {
  overloaded_error: 'ServiceUnavailableException',
  rate_limit_error: 'ThrottlingException',
  timeout_error: 'ModelTimeoutException',
}

/** The status Bedrock's clients get for `status`: Anthropic's 529 (overloaded) is Bedrock's 503. */
const bedrockStatus = (status: number) => (status === 529 ? 503 : status)

/** An upstream's Anthropic-shaped error answer (passthrough or translated) in Bedrock's shape. */
function relayedError(status: number, body: Buffer): RelayedError {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    // Not JSON (a proxy's page): the status says what it is.
  }
  const error = anthropicError(parsed)
  const type = (error?.type === undefined ? undefined : TYPE_BY_ANTHROPIC[error.type]) ?? bedrockErrorType(status)
  const message = error?.message ?? `The upstream answered with status ${status}.`
  return { status: bedrockStatus(status), body: Buffer.from(JSON.stringify({ message })), headers: { 'x-amzn-errortype': type } }
}

/**
 * A configured model as an inference profile summary, every member AWS's `InferenceProfileSummary` requires (the
 * ARN names no region or account: the gateway has neither).
 */
function inferenceProfile(model: ListedModel) {
  const at = new Date((model.released ?? model.created) * 1000).toISOString()
  return {
    inferenceProfileName: model.id,
    description: `${model.id} through the gateway`,
    createdAt: at,
    updatedAt: at,
    inferenceProfileArn: `arn:aws:bedrock:::inference-profile/${model.id}`,
    models: [{ modelArn: `arn:aws:bedrock:::foundation-model/${model.id}` }],
    inferenceProfileId: model.id,
    status: 'ACTIVE',
    type: 'SYSTEM_DEFINED',
  }
}

/** The members the Bedrock dialect takes to serve Bedrock-format clients: its model list and its errors. */
export const bedrockClientMembers = {
  modelListPaths: ['/inference-profiles'],
  keyHint: '`x-api-key` or `Authorization: Bearer <key>` (AWS_BEARER_TOKEN_BEDROCK)',
  // The AWS SDK's own headers, sent from a browser too; its retries' markers among them.
  clientHeaders: [...anthropic.clientHeaders, 'authorization', 'amz-sdk-invocation-id', 'amz-sdk-request', 'x-amz-user-agent'],
  // The AWS SDK reads the request id from here (`$metadata.requestId`).
  requestIdHeader: 'x-amzn-requestid',
  modelList: (models: readonly ListedModel[]) => ({ inferenceProfileSummaries: models.map(inferenceProfile) }),
  modelObject: inferenceProfile,
  errorBody: ({ message }: ErrorFacts) => ({ message }),
  errorHeaders: (error: ErrorFacts) => ({
    'x-amzn-errortype': error.code === 'invalid_api_key' ? 'UnrecognizedClientException' : bedrockErrorType(error.status),
  }),
  errorStatus: bedrockStatus,
} satisfies Partial<Dialect>

/**
 * The client variant serving InvokeModel: Anthropic's Messages on Bedrock's paths. It reaches Anthropic, Bedrock-Claude
 * and Vertex-Claude upstreams passthrough (`speaks`), every other through the Messages hub.
 */
export const bedrockInvokeClient: Dialect = {
  ...anthropic,
  ...bedrockClientMembers,
  name: 'bedrock',
  speaks: anthropic,
  routes: [],
  modelListPaths: undefined,
  // Every Bedrock client announces itself by its path alone.
  recognises: () => false,
  relayedError,
}
