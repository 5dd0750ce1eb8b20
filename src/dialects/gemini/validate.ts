import { invalidField as invalid } from '../../errors.js'
import { isObject } from '../../json/value.js'

/** Checks a generate-content body: `contents` must be a non-empty array of objects. */
export function validateGenerateContent(body: Record<string, unknown>): void {
  const contents = body.contents
  if (!Array.isArray(contents) || contents.length === 0) invalid('contents', "'contents' must be a non-empty array.")
  for (let i = 0; i < contents.length; i++) {
    const entry: unknown = contents[i]
    if (!isObject(entry)) invalid(`contents[${i}]`, `'contents[${i}]' must be an object.`)
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

function objectAt(value: unknown, param: string): void {
  if (!isObject(value)) invalid(param, `'${param}' must be an object.`)
}

/** Checks an `:embedContent` body: `content` must be an object. */
export function validateEmbedContent(body: Record<string, unknown>): void {
  objectAt(body.content, 'content')
}

/** Checks a `:batchEmbedContents` body: `requests` must be a non-empty array of objects, each with a `content` object. */
export function validateBatchEmbedContents(body: Record<string, unknown>): void {
  const requests = body.requests
  if (!Array.isArray(requests) || requests.length === 0) invalid('requests', "'requests' must be a non-empty array.")
  let checked: unknown
  for (let i = 0; i < requests.length; i++) {
    const request: unknown = requests[i]
    // A big body's elements are shared summaries (see scanJsonBody): one that passed passes again. The names are
    // built only for the error: a string per element of a big array costs more than the checks.
    if (request === checked) continue
    if (!isObject(request)) invalid(`requests[${i}]`, `'requests[${i}]' must be an object.`)
    if (!isObject(request.content)) invalid(`requests[${i}].content`, `'requests[${i}].content' must be an object.`)
    checked = request
  }
}

/** Checks a `:countTokens` body: `contents` (an array) or `generateContentRequest` (an object) says what to count. */
export function validateCountTokens(body: Record<string, unknown>): void {
  const request = body.generateContentRequest ?? body.generate_content_request
  if (request !== undefined) objectAt(request, 'generateContentRequest')
  else if (!Array.isArray(body.contents)) invalid('contents', "'contents' (an array) or 'generateContentRequest' is required.")
}
