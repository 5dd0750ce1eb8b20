// Azure OpenAI's content filter: a prompt it refuses is a 400 whose error names the categories that tripped it
// (`innererror.content_filter_result`); an answer it cuts ends with `finish_reason: content_filter`, which the hub
// carries to every format already. The refusal's reason is kept in the message every client format carries.
import { isObject } from '../../json/value.js'
import type { UpstreamFormat } from '../../translate/format.js'
import type { HubError } from '../../translate/hub.js'
import { chatCompletionsFormat } from '../openai/chat-completions/index.js'
import { responsesFormat } from '../openai/responses/index.js'

/** The categories of one `content_filter_result` that were filtered or detected, as `violence (medium)`. */
export function filteredCategories(result: unknown): string[] {
  if (!isObject(result)) return []
  const named: string[] = []
  for (const [category, verdict] of Object.entries(result)) {
    if (!isObject(verdict) || (verdict.filtered !== true && verdict.detected !== true)) continue
    const severity = typeof verdict.severity === 'string' && verdict.severity !== 'safe' ? ` (${verdict.severity})` : ''
    named.push(`${category}${severity}`)
  }
  return named
}

/**
 * An Azure error body as the hub's error: OpenAI's reading, with a content-filter refusal's categories added to its
 * message, where the clients of other formats (whose errors carry a message and a status only) still see why.
 */
export function azureErrorToHub(body: unknown, read: (body: unknown) => HubError): HubError {
  const error = read(body)
  const inner = isObject(body) && isObject(body.error) && isObject(body.error.innererror) ? body.error.innererror : undefined
  if (error.code !== 'content_filter' && inner?.code !== 'ResponsibleAIPolicyViolation') return error
  const categories = filteredCategories(inner?.content_filter_result)
  const reason = categories.length > 0 ? categories.join(', ') : 'no category named'
  return { ...error, code: 'content_filter', message: `${error.message} [Azure content filter: ${reason}]` }
}

/** Chat completions as Azure serves them: OpenAI's format, its errors read for their content-filter reason. */
export const azureChatFormat: UpstreamFormat = {
  ...chatCompletionsFormat,
  errorToHub: (body) => azureErrorToHub(body, chatCompletionsFormat.errorToHub),
}

/** The Responses API as Azure serves it, likewise. */
export const azureResponsesFormat: UpstreamFormat = {
  ...responsesFormat,
  errorToHub: (body) => azureErrorToHub(body, responsesFormat.errorToHub),
}
