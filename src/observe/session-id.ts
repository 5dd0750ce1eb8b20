import type { IncomingHttpHeaders } from 'node:http'

/** The longest session id carried, in characters: Claude Code's are UUIDs (36); anything far longer is not an id. */
export const MAX_SESSION_ID_LENGTH = 128

/** Visible ASCII only: the id goes into usage events and span attributes, never a control character or a space. */
const SESSION_ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_SESSION_ID_LENGTH}}$`)

/**
 * The session a call belongs to, as Claude Code names it in `X-Claude-Code-Session-Id`, so operators can sum a
 * session's calls and cost. Undefined when absent, sent twice, too long or not visible ASCII: a malformed id is
 * ignored, never an error, since it only labels the call.
 */
export function sessionIdOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['x-claude-code-session-id']
  return typeof raw === 'string' && SESSION_ID.test(raw) ? raw : undefined
}
