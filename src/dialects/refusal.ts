// The 400 for a call that is never translated (embeddings, token counts) on a model whose upstream speaks another
// format: what the model is, where such a call for it goes if anywhere, and what it does serve, so the client is not
// sent from one route to another that refuses it too.
import type { Dialect, OperationFormat } from './dialect.js'
import { DIALECTS, MODEL_ROUTES, servedOperations, speaksAs } from './index.js'

/** "an Anthropic upstream", "a Gemini upstream". */
function anUpstream(dialect: Dialect): string {
  return `${/^[AEIOU]/i.test(dialect.upstreamsCalled) ? 'an' : 'a'} ${dialect.upstreamsCalled} upstream`
}

/** The listed routes of `routes`, with the model's id in place of `{model}`. */
function named(routes: typeof MODEL_ROUTES, model: string): string[] {
  return routes.flatMap((route) => (route.listed === false ? [] : [(route.listed ?? `POST ${route.path}`).replace('{model}', model)]))
}

/**
 * Why `format`, a call of `inbound`'s clients, cannot be served by the model `model` of an `upstream` upstream, or
 * undefined when such calls are translated.
 */
export function otherFormatRefusal(format: OperationFormat, inbound: Dialect, model: string, upstream: Dialect): string | undefined {
  const what = format.untranslated
  if (what === undefined) return undefined
  const here = named(
    MODEL_ROUTES.filter((route) => route.format === format),
    model,
  )
  const served = servedOperations(upstream)
  const there = named(
    MODEL_ROUTES.filter(
      (route) => speaksAs(route.dialect, upstream) && route.format.untranslated === what && served.has(route.format.operation),
    ),
    model,
  )
  const serves = named(
    MODEL_ROUTES.filter((route) => served.has(route.format.operation)),
    model,
  )
  // A count is also served for models of upstreams with a counting method of their own (Gemini's `:countTokens`,
  // OpenAI's input_tokens).
  const servedFor = [inbound, ...(format.counting ? DIALECTS.filter((d) => d !== inbound && d.countingApi !== undefined) : [])]
  const instead = there.length > 0 ? `call ${there.join(' or ')} for it` : `${upstream.upstreamsCalled} upstreams have no route for ${what}`
  return (
    `The model '${model}' is served by ${anUpstream(upstream)}, and ${what} are not translated between formats: ` +
    `${here.join(' and ')} serves models of ${servedFor.map((d) => d.upstreamsCalled).join(' and ')} upstreams only; ${instead}. ` +
    `The model '${model}' serves ${serves.join(', ')}.`
  )
}
