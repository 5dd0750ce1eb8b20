import { createGateway, type Gateway } from '../../src/gateway.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { KEY_A } from './fixture.js'

/** A log line as the gateway wrote it. */
export interface LoggedLine {
  message: string
  meta?: Record<string, unknown>
}

/**
 * A gateway for `KEY_A` with these upstreams and models, whose warn and error lines and usage events are collected
 * for a test to read.
 */
export function collectingGateway(options: Pick<GatewayOptions, 'upstreams' | 'models'> & Partial<GatewayOptions>): {
  gateway: Gateway
  logs: LoggedLine[]
  usage: UsageEvent[]
} {
  const logs: LoggedLine[] = []
  const usage: UsageEvent[] = []
  const gateway = createGateway({
    auth: { apiKeys: [KEY_A] },
    logger: { warn: (message, meta) => logs.push({ message, meta }), error: (message, meta) => logs.push({ message, meta }) },
    onUsage: (u) => usage.push(u),
    ...options,
  })
  return { gateway, logs, usage }
}
