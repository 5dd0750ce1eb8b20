import type { ServerResponse } from 'node:http'

/** What the call pipeline tells the console, through the runtime (undefined there when the console is off). */
export interface ConsoleHooks {
  /** A model call's response, before its body is read: the console counts the bytes its client gets. */
  watchCall(requestId: string, res: ServerResponse): void
  /** A call that went upstream was settled: one request, and the tokens and nano-dollars the ledger charged for it. */
  charged(owner: string, tokens: number, cost: number): void
  /** A background response was created. */
  noteBackground(owner: string, requestId: string, id: string, model: string): void
}
