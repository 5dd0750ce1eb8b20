import { invalidField as invalid } from '../../errors.js'

/** Checks a generate-content body: `contents` must be a non-empty array of objects. */
export function validateGenerateContent(body: Record<string, unknown>): void {
  const contents = body.contents
  if (!Array.isArray(contents) || contents.length === 0) invalid('contents', "'contents' must be a non-empty array.")
  for (let i = 0; i < contents.length; i++) {
    const entry: unknown = contents[i]
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      invalid(`contents[${i}]`, `'contents[${i}]' must be an object.`)
    }
  }
}

/** Checks `alt` of a generate-content call: absent or `json` on `:generateContent`, `sse` on `:streamGenerateContent`. */
export function validateGeminiAlt(stream: boolean, alt: string | null): void {
  // The client's query is never forwarded (it may carry `?key=`, and `fields` could strip the usage the gateway
  // meters), so no other format can be honoured: Google's JSON-array stream is refused, not answered as SSE.
  if (stream && alt !== 'sse') {
    invalid('alt', ':streamGenerateContent is served as server-sent events only: add ?alt=sse to the URL.')
  }
  if (!stream && alt !== null && alt !== 'json') {
    invalid('alt', ":generateContent answers JSON only: leave out 'alt', or use :streamGenerateContent?alt=sse to stream.")
  }
}
