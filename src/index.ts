export { createGateway } from './gateway.js'
export { GatewayError, isGatewayError, type GatewayErrorCode, type HttpErrorCode, type ConfigErrorCode } from './errors.js'
export { requestBodyHash } from './json/hash.js'
export {
  gatewayChannels,
  type CallEndMessage,
  type CallStartMessage,
  type ChannelMessage,
  type RecordStoredMessage,
  type UpstreamAttemptMessage,
} from './observe/channels.js'
export type {
  AuthOptions,
  AuthResult,
  DialectName,
  Gateway,
  GatewayLogger,
  GatewayOptions,
  HandleOptions,
  LimitOptions,
  ModelOptions,
  Operation,
  PreparsedBody,
  RecoveryOptions,
  RecoveryRecord,
  RecoverySummary,
  TimeoutOptions,
  TokenCounts,
  UpstreamOptions,
  UsageEvent,
} from './types.js'
export { OMITTED_TOO_LARGE } from './types.js'
