import type { IncomingHttpHeaders } from 'node:http'
import type { ResolvedModel } from '../config/resolve.js'
import { type OperationFormat, speaksAs, translatorFor, type UpstreamApi } from '../dialects/index.js'
import { otherFormatRefusal } from '../dialects/refusal.js'
import type { RequestBody } from '../http/read-body.js'
import { replaceTopLevelString } from '../json/rewrite.js'
import type { Operation } from '../types.js'
import type { CallBodies, CallSpec, Refused, Translation } from './call-spec.js'

/**
 * What a call's bodies are made from: its spec's own members, known before the spec is (`model` is the one the
 * client asked for: its id is what its body names, and what translated answers report).
 */
type BodySource = Pick<CallSpec, 'requestId' | 'format' | 'inbound' | 'body' | 'model' | 'stream'> & {
  /** The client's request headers, of which those its dialect forwards go to an upstream of the same dialect. */
  clientHeaders: IncomingHttpHeaders
  /** Headers that stand in for the client's own of those names (a spoken body's, `SpokenBody.headers`). @default none */
  spokenHeaders?: Readonly<Record<string, string>>
  /** `translation.strict`: refuse what a target lacks or refuses rather than drop and name it. @default false */
  strict?: boolean
}

const NONE: readonly string[] = []

/** The names of a flat `[name, value, …]` header list. */
const namesIn = (headers: readonly string[]) => headers.filter((_, i) => i % 2 === 0)

/**
 * The headers of `names` the client sent, as a flat `[name, value, …]` list (repeated ones as Node joined them),
 * those of `spoken` in place of the client's own.
 */
function sentHeaders(
  headers: IncomingHttpHeaders,
  names: readonly string[],
  spoken: Readonly<Record<string, string>> | undefined,
): readonly string[] {
  if (names.length === 0) return NONE
  const sent: string[] = []
  for (const name of names) {
    const value = (spoken !== undefined && Object.hasOwn(spoken, name) ? spoken[name] : undefined) ?? headers[name]
    if (typeof value === 'string') sent.push(name, value)
  }
  return sent.length === 0 ? NONE : sent
}

/** The request as one upstream format gets it, prepared for the first model of that format asked for. */
interface Prepared {
  bytes: Buffer
  /** How answers come back into the client's format; undefined for passthrough. */
  translation: Translation | undefined
  /** Whether `bytes` name the model (another model of the format gets them renamed), rather than the upstream path. */
  modelInBody: boolean
  /** The upstream model name `bytes` carry. */
  named: string
  /** Whether `bytes` ask for usage the client did not ask for (its stream then has it taken out again). */
  usageAsked?: boolean
}

const isRefused = (entry: Prepared | Refused): entry is Refused => 'refusedField' in entry

/** The body with its top-level `model` replaced: spliced at the scanner's span for a large body, never decoded whole. */
function withModel(body: RequestBody, name: string): Buffer {
  const span = body.spans?.get('model')
  if (span) return Buffer.concat([body.bytes.subarray(0, span[0]), Buffer.from(JSON.stringify(name)), body.bytes.subarray(span[1])])
  return Buffer.from(replaceTopLevelString(body.bytes.toString('utf8'), 'model', name), 'utf8')
}

/** The body as sent, naming the model as the upstream knows it wherever the format names it in the body. */
function renamed(format: OperationFormat, body: RequestBody, id: string, upstreamModel: string): Buffer {
  if (upstreamModel === id) return body.bytes
  if (format.modelInBody) return withModel(body, upstreamModel)
  if (!format.renameInBody) return body.bytes
  const text = body.bytes.toString('utf8')
  const out = format.renameInBody(text, id, upstreamModel)
  return out === text ? body.bytes : Buffer.from(out, 'utf8')
}

/**
 * The request bodies of one call, one per upstream format: the client's own bytes for its format (renamed where a
 * model is known upstream by another name), a translation for the other, made once and only when a model of that
 * format is asked for (the primary, or a fallback). A format that cannot express a field of the request gets a
 * refusal naming it instead.
 */
export class UpstreamBodies implements CallBodies {
  readonly #source: BodySource
  // Most calls only ever need one format: no map until a second one is asked for. Keyed by the upstream's dialect
  // and, for a translation, the API it is written for (two upstreams of a dialect may take different ones).
  #first: { key: object; entry: Prepared | Refused } | undefined
  #others: Map<object, Prepared | Refused> | undefined
  #fields: Record<string, unknown> | undefined
  /** The client's headers its dialect forwards, read once. */
  readonly #forwarded: readonly string[]

  constructor(source: BodySource) {
    this.#source = source
    this.#forwarded = sentHeaders(source.clientHeaders, source.inbound.forwardedHeaders ?? NONE, source.spokenHeaders)
  }

  /** The bytes for `model`, or the refusal of a field its format cannot express. */
  for(model: ResolvedModel): Buffer | Refused {
    const entry = this.#prepared(model)
    if (isRefused(entry)) return entry
    const bytes = this.#named(entry, model)
    // A passthrough body of a cloud's own (Claude on Vertex AI or Bedrock), made from the bytes naming the model.
    const own = entry.translation === undefined ? model.upstream.dialect.passthroughBody : undefined
    return own === undefined ? bytes : own(bytes, this.#forwarded, this.#source.format.operation)
  }

  /** The prepared bytes, naming `model` as its upstream knows it where they name a model. */
  #named(entry: Prepared, model: ResolvedModel): Buffer {
    if (!entry.modelInBody || entry.named === model.upstreamModel) return entry.bytes
    if (entry.translation || entry.usageAsked)
      return Buffer.from(replaceTopLevelString(entry.bytes.toString('utf8'), 'model', model.upstreamModel))
    const { format, body } = this.#source
    return renamed(format, body, this.#source.model.id, model.upstreamModel)
  }

  /** Whether the stream `model` answers has usage in it its client did not ask for (taken out before it is relayed). */
  usageAskedFor(model: ResolvedModel): boolean {
    const entry = this.#prepared(model)
    return !isRefused(entry) && entry.usageAsked === true
  }

  /** How an answer of `model` comes back into the client's format; undefined when it speaks the client's format. */
  translationFor(model: ResolvedModel): Translation | undefined {
    const entry = this.#prepared(model)
    return isRefused(entry) ? undefined : entry.translation
  }

  operationFor(model: ResolvedModel): Operation {
    const { dialect, api } = model.upstream
    return speaksAs(this.#source.inbound, dialect) ? this.#source.format.operation : (this.#apiFor(model)?.operation ?? api.operation)
  }

  /** The API a translated call takes to `model`'s upstream: its counting one for a token count (none: refused). */
  #apiFor(model: ResolvedModel): UpstreamApi | undefined {
    return this.#source.format.counting ? model.upstream.dialect.countingApi : model.upstream.api
  }

  headersFor(model: ResolvedModel): readonly string[] {
    const { dialect, dialectHeaders } = model.upstream
    // A translated call asks what the translation is written for (the configured version, no betas); so does a
    // client that sent none of its dialect's headers.
    if (!speaksAs(this.#source.inbound, dialect) || this.#forwarded.length === 0) return dialectHeaders.own
    const headers: string[] = []
    const forwarded = this.#forwarded
    for (let i = 0; i < forwarded.length; i += 2) {
      if (dialectHeaders.forwarded.includes(forwarded[i] as string)) headers.push(forwarded[i] as string, forwarded[i + 1] as string)
    }
    // The upstream's own values stand in for those the client did not send: one of each, always.
    const own = dialectHeaders.own
    for (let i = 0; i < own.length; i += 2) {
      if (!namesIn(headers).includes(own[i] as string)) headers.push(own[i] as string, own[i + 1] as string)
    }
    return headers
  }

  #prepared(model: ResolvedModel): Prepared | Refused {
    const { dialect, api } = model.upstream
    const key: object = speaksAs(this.#source.inbound, dialect) ? dialect : (this.#apiFor(model)?.format ?? api.format)
    if (this.#first === undefined) {
      const entry = this.#prepare(model)
      this.#first = { key, entry }
      return entry
    }
    if (this.#first.key === key) return this.#first.entry
    this.#others ??= new Map()
    let entry = this.#others.get(key)
    if (!entry) {
      entry = this.#prepare(model)
      this.#others.set(key, entry)
    }
    return entry
  }

  #prepare(model: ResolvedModel): Prepared | Refused {
    const { format, body, inbound, stream, requestId } = this.#source
    const modelId = this.#source.model.id
    const modelInBody = format.modelInBody || format.renameInBody !== undefined
    const named = model.upstreamModel
    if (speaksAs(inbound, model.upstream.dialect)) {
      // Every stream is metered: usage its client did not ask for is asked for here, and taken out of its stream.
      const asked = stream ? format.askedUsage?.ask(body) : undefined
      if (asked === undefined) return { bytes: renamed(format, body, modelId, named), translation: undefined, modelInBody, named }
      const source = { ...body, bytes: asked, spans: undefined }
      return { bytes: renamed(format, source, modelId, named), translation: undefined, modelInBody, named, usageAsked: true }
    }
    // Embeddings are passthrough only, and token counts unless the upstream has a counting method of its own.
    const api = this.#apiFor(model)
    const refusal = format.counting && api !== undefined ? undefined : otherFormatRefusal(format, inbound, model.id, model.upstream.dialect)
    if (refusal !== undefined || api === undefined) return { refusedField: 'model', message: refusal ?? 'No upstream API serves it.' }
    const translator = translatorFor(inbound, model.upstream.dialect, format.operation, api)
    if (!translator) return { refusedField: 'model', message: `The model '${model.id}' speaks a format this call cannot be translated to.` }
    // A large body is only scanned on the way in; translating it needs it whole, once however many formats need it.
    this.#fields ??= body.value ?? (JSON.parse(body.bytes.toString('utf8')) as Record<string, unknown>)
    const strict = this.#source.strict === true
    const call = { model: modelId, upstreamModel: named, stream, requestId, maxOutputTokens: model.maxOutputTokens, strict }
    const result = translator.request(this.#fields, call)
    if (!result.ok) return { refusedField: result.field, message: result.message }
    const { body: upstream, plan } = result.value
    const translated = typeof (upstream as { model?: unknown }).model === 'string'
    return { bytes: Buffer.from(JSON.stringify(upstream)), translation: { translator, plan }, modelInBody: translated, named }
  }
}
