import type { Agent } from 'undici'
import type { ResolvedOptions } from './options.js'
import type { RecoveryStore } from './store/recovery-store.js'

/** What every handler of one gateway shares. */
export interface GatewayContext {
  options: ResolvedOptions
  agent: Agent
  store: RecoveryStore
}
