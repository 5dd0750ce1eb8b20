// The public types of the Bedrock dialect: its name, its operations' names and its upstreams' own options (imported by
// the package's names and option types; imports nothing).

/** What the package's public types take of the Bedrock dialect (see `DialectDeclarations` in ../names.ts). */
export interface BedrockDeclaration {
  name: 'bedrock'
  /**
   * `bedrock.invoke`: InvokeModel of an Anthropic model (`POST /model/{id}/invoke`, `…/invoke-with-response-stream`);
   * `bedrock.converse`: the Converse API (`POST /model/{id}/converse`, `…/converse-stream`); `bedrock.countTokens`:
   * CountTokens (`POST /model/{id}/count-tokens`).
   */
  operation: 'bedrock.invoke' | 'bedrock.converse' | 'bedrock.countTokens'
  options: BedrockOptionFields
}

/** AWS credentials as a provider gives them: with an expiry when they are temporary. */
export interface AwsCredentialIdentity {
  accessKeyId: string
  secretAccessKey: string
  /** The session token of temporary credentials, sent as `x-amz-security-token`. */
  sessionToken?: string
  /** When temporary credentials expire: they are refreshed 5 minutes before. */
  expiration?: Date
}

/**
 * `credentials` of a Bedrock upstream: static keys, or a provider (any of `@aws-sdk/credential-providers`, such as
 * `fromIni({ profile })`), kept until shortly before their `expiration`.
 */
export type BedrockCredentials =
  | { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  | (() => Promise<AwsCredentialIdentity>)

/** The options only a Bedrock upstream (`type: 'bedrock'`) takes, besides the common ones. */
export interface BedrockOptionFields {
  /** AWS Bedrock: Claude by InvokeModel, other models by Converse (see docs/guides/bedrock.md). */
  type: 'bedrock'
  /** The AWS region (`us-east-1`): the base URL is `https://bedrock-runtime.{region}.amazonaws.com`, calls are signed for it. */
  region?: string
  /** A VPC endpoint or a proxy instead of the region's endpoint. @default from `region` */
  baseUrl?: string
  /** What calls are signed with (SigV4). @default the AWS default chain (the optional peer `@aws-sdk/credential-providers`), unless `apiKey` */
  credentials?: BedrockCredentials
  /** The most bytes one event-stream frame may announce; a larger one breaks the stream off. @default 1048576 */
  maxFrameBytes?: number
}
