export { type ConfigErrorCode, GatewayError, type GatewayErrorCode, type HttpErrorCode, isGatewayError } from './errors.js'
export { createGateway } from './gateway.js'
export { ownerId } from './http/auth.js'
export { requestBodyHash } from './json/hash.js'
export {
  type CallEndMessage,
  type CallRefusedMessage,
  type CallServedMessage,
  type CallStartMessage,
  type ChannelMessage,
  gatewayChannels,
  type RecordStoredMessage,
  type RecordsTrimMessage,
  type UpstreamAttemptMessage,
  type UpstreamCircuitMessage,
} from './observe/channels.js'
export type {
  AuthOptions,
  AuthResult,
  BackgroundOptions,
  ConsoleOptions,
  CorsOptions,
  DialectName,
  Gateway,
  GatewayLogger,
  GatewayOptions,
  GatewayStatus,
  HandleOptions,
  IdempotencyOptions,
  KeepAliveOptions,
  KeySelection,
  LimitOptions,
  ModelOptions,
  ModelPrice,
  Operation,
  OwnerLimits,
  OwnerUsage,
  PreparsedBody,
  RecoveryOptions,
  RecoveryRecord,
  RecoverySummary,
  TimeoutOptions,
  TokenCounts,
  TranslationOptions,
  UpstreamKeyOptions,
  UpstreamOptions,
  UsageEvent,
} from './types.js'
export { OMITTED_TOO_LARGE } from './types.js'
