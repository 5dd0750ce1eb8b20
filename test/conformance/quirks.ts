// Where what the gateway sends cannot match the published schemas, and why: each one is written up in
// docs/reference/schema-quirks.md under its id. A quirk names the cases it happens in; the matrix fails when one of
// those cases no longer shows it, so a quirk that was fixed is taken off this list.
import type { Violation } from './check.js'

/** A known violation: the cases it happens in, and the violations it accounts for. */
export interface Quirk {
  id: string
  /** The names of the cases that show it. */
  cases: RegExp
  /** Where in the answer (`body`, `event 0 (response.created)`, …); any place when absent. */
  where?: RegExp
  /** The members at fault. */
  path: RegExp
}

/** Every known quirk (see docs/reference/schema-quirks.md). */
export const QUIRKS: readonly Quirk[] = [
  // The spec has no shape for an error inside a chat stream; the gateway sends an ErrorResponse as the event's data.
  { id: 'chat-stream-error', cases: /^chat (passthrough|translated) stream broken$/, path: /^$/ },
  // The spec's own examples of response.created and response.in_progress carry `"usage": null`; its schema does not allow it.
  {
    id: 'response-usage-null-in-progress',
    cases: /^responses (passthrough|translated) stream/,
    where: /\((response\.created|response\.in_progress)\)$/,
    path: /^response\.usage$/,
  },
  // Passthrough bytes are the upstream's own: what the mock upstream sends, as OpenAI's API does, against the schema.
  { id: 'upstream-system-fingerprint-null', cases: /^chat passthrough/, path: /^system_fingerprint$/ },
  { id: 'upstream-user-null', cases: /^responses passthrough/, path: /^(response\.)?user$/ },
  {
    id: 'upstream-responses-cache-write-tokens',
    cases: /^responses passthrough (json|stream) (text|tool|background)$/,
    path: /(^|\.)usage\.input_tokens_details\.cache_write_tokens$/,
  },
  // A text block the gateway writes has no `citations`: `@ai-sdk/anthropic` 3 refuses `citations: null`.
  {
    id: 'anthropic-text-citations-omitted',
    cases: /^messages translated(-gemini)? (json text|stream text|stream broken)$/,
    path: /^(content\.\d+|content_block)\.citations$/,
  },
  // The mock's messages predate the members the SDK 1.14 types require (the gateway's own answers carry them all).
  {
    id: 'upstream-anthropic-members',
    cases: /^messages passthrough /,
    path: /^((message\.)?(container|diagnostics|stop_details|usage\.(inference_geo|output_tokens_details|server_tool_use|speed))|delta\.(container|stop_details)|usage\.(output_tokens_details|server_tool_use)|(content\.\d+|content_block)\.(citations|caller))$/,
  },
  // A passthrough error keeps the upstream's body verbatim (its `request_id` the upstream's); `request-id` is the gateway's.
  { id: 'upstream-anthropic-error-request-id', cases: /^error anthropic upstream passthrough \d+$/, where: /^body$/, path: /^request_id$/ },
  {
    id: 'upstream-function-call-arguments-done-name',
    cases: /^responses passthrough stream tool$/,
    where: /\(response\.function_call_arguments\.done\)$/,
    path: /^name$/,
  },
]

/** Whether `violation` is what `quirk` accounts for. */
export function accounts(quirk: Quirk, violation: Violation): boolean {
  return quirk.cases.test(violation.case) && (quirk.where?.test(violation.where) ?? true) && quirk.path.test(violation.path)
}
