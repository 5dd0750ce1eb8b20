export { type ConfigErrorCode, GatewayError, type GatewayErrorCode, type HttpErrorCode, isGatewayError } from './errors.js'
export { createGateway } from './gateway.js'
export { requestBodyHash } from './json/hash.js'
export {
  type CallEndMessage,
  type CallServedMessage,
  type CallStartMessage,
  type ChannelMessage,
  gatewayChannels,
  type RecordStoredMessage,
  type UpstreamAttemptMessage,
  type UpstreamCircuitMessage,
} from './observe/channels.js'
export type {
  AuthOptions,
  AuthResult,
  BackgroundOptions,
  CorsOptions,
  DialectName,
  Gateway,
  GatewayLogger,
  GatewayOptions,
  GatewayStatus,
  HandleOptions,
  IdempotencyOptions,
  KeySelection,
  LimitOptions,
  ModelOptions,
  Operation,
  PreparsedBody,
  RecoveryOptions,
  RecoveryRecord,
  RecoverySummary,
  TimeoutOptions,
  TokenCounts,
  UpstreamKeyOptions,
  UpstreamOptions,
  UsageEvent,
} from './types.js'
export { OMITTED_TOO_LARGE } from './types.js'
