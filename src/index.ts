export { createGateway, type Gateway, type HandleOptions } from './gateway.js'
export { GatewayError, isGatewayError, type GatewayErrorCode } from './errors.js'
export { requestBodyHash } from './hash.js'
export type {
  AuthOptions,
  AuthResult,
  GatewayLogger,
  GatewayOptions,
  ModelOptions,
  RecoveryOptions,
  UpstreamOptions,
  UpstreamType,
  UsageEvent,
} from './options.js'
export type { PreparsedBody } from './body.js'
export { OMITTED_TOO_LARGE, type Endpoint, type RecoveryRecord, type RecoverySummary } from './types.js'
