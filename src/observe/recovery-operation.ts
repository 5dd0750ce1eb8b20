import { performance } from 'node:perf_hooks'
import { isGatewayError } from '../errors.js'
import type { Exchange, RecoveryRoute } from '../http/dispatch.js'
import { channels, type RecoveryOperationMessage, traceHeadersOf } from './channels.js'

/** The operation each Recoveries route is, as `recovery:operation` names it. */
const OPERATION_OF = {
  'recoveries.list': 'list',
  'recoveries.lookup': 'lookup',
  'recoveries.get': 'get',
  'recoveries.delete': 'delete',
  'recoveries.deleteAll': 'deleteAll',
  'recoveries.stream': 'resume',
  'recoveries.cancel': 'cancel',
} as const satisfies Record<RecoveryRoute['kind'], RecoveryOperationMessage['operation']>

/** Serves one Recoveries request and publishes `recovery:operation` about it, whatever the outcome. */
export async function reportRecoveryOperation(
  gatewayId: string,
  ex: Exchange,
  route: RecoveryRoute,
  serve: (ex: Exchange, route: RecoveryRoute) => Promise<void>,
): Promise<void> {
  const message: RecoveryOperationMessage = {
    gatewayId,
    requestId: ex.requestId,
    owner: ex.owner,
    operation: OPERATION_OF[route.kind],
    startedAt: ex.startedAt,
    durationMs: 0,
  }
  if ('requestId' in route) message.recordId = route.requestId
  const trace = traceHeadersOf(ex.req.headers)
  if (trace) message.trace = trace
  try {
    await serve(ex, route)
    if (route.kind === 'recoveries.get') message.found = true
  } catch (error) {
    if (route.kind === 'recoveries.get') message.found = false
    message.error = isGatewayError(error) ? error.code : 'internal_error'
    throw error
  } finally {
    message.durationMs = performance.now() - ex.startedAt
    channels.recoveryOperation.publish(message)
  }
}
