/**
 * A small valid chat-completions body ending in the user message `content`. `extra` adds or replaces top-level
 * fields (`mock` steers the mock upstream); `system` puts a system message first.
 */
export function chatBody(content = 'hello', extra: Record<string, unknown> = {}, system?: string): Record<string, unknown> {
  const user = { role: 'user', content }
  const messages = system === undefined ? [user] : [{ role: 'system', content: system }, user]
  return { model: 'gpt-4o-mini', messages, ...extra }
}

/** A small valid generate-content body with one user `text`; `extra` adds top-level fields (`mock` steers the mock upstream). */
export function geminiBody(text = 'hello', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { contents: [{ role: 'user', parts: [{ text }] }], ...extra }
}
