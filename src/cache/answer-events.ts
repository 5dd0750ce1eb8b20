import type { HubResponse, HubStreamEvent } from '../translate/hub.js'

/**
 * A whole answer as the events of a stream that says the same at once: what a client format's stream encoder writes
 * a streamed call's hit from, when the cached answer came whole. The inverse of `assembleStream`'s draft.
 */
export function answerEvents(hub: HubResponse): HubStreamEvent[] {
  const events: HubStreamEvent[] = [{ type: 'meta', id: hub.id, model: hub.model, created: hub.created }]
  for (const { index: choice, parts, finish } of hub.choices) {
    let call = 0
    for (const part of parts) {
      switch (part.type) {
        case 'text':
        case 'refusal':
          events.push({ type: part.type, choice, text: part.text })
          break
        case 'reasoning':
          // An empty signature is none: the draft keeps such a part open for more.
          events.push({ type: 'reasoning', choice, text: part.text, signature: part.signature || undefined, redacted: part.redacted })
          break
        case 'tool_call':
          events.push({
            type: 'tool_call',
            choice,
            index: call++,
            id: part.id,
            name: part.name,
            args: JSON.stringify(part.args),
            signature: part.signature,
          })
          break
        default:
          // Media and tool results are what a request holds, not an answer.
          break
      }
    }
    if (finish) events.push({ type: 'finish', choice, finish })
  }
  if (hub.usage) events.push({ type: 'usage', usage: hub.usage })
  return events
}
