// model-gateway/testing: a deterministic fake of the OpenAI chat-completions, Responses (input-token counts too) and
// embeddings APIs, of the Gemini generate-content, embedding and token-counting API, of Anthropic's Messages API
// (messages, token counts, models), of Google Vertex AI (its token endpoint, Gemini and Claude paths) and of AWS Bedrock's runtime (SigV4 checked, event streams), to test against with no key and no network. The examples, the project's own tests and its benchmarks run
// against it; examples/mock-upstream.mjs runs it alone.
//
// Per-request behaviour is driven by an optional top-level body field `mock` (see MockControls). Bodies that cannot
// carry one, such as the ones a gateway translates from another format, are steered by a marker they contain
// (`MockUpstream.steer`). Not loaded by any other entry of the package.

export type { AzureMockOptions } from './azure.js'
export { MOCK_AWS_CREDENTIALS } from './bedrock.js'
export { startMockUpstream } from './server.js'
export type { MockAwsCredentials, MockBedrockOptions, MockControls, MockUpstream, MockUpstreamOptions, RecordedRequest } from './types.js'
export type { VertexMock, VertexMockOptions, VertexServiceAccountKey } from './vertex.js'
