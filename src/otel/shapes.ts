import type { Attributes } from '@opentelemetry/api'
import { OTEL_OPERATION_NAMES } from '../dialects/index.js'
import type { Operation } from '../types.js'

/** `gen_ai.operation.name` of a gateway operation, as its dialect names it. */
export const operationName = (operation: Operation): string => OTEL_OPERATION_NAMES.get(operation) ?? operation

/** Past this many shapes (model ids are configured, so it is never reached in practice), new ones are not kept. */
const MAX_SHAPES = 10_000
/** Past this many error types per shape, their attribute sets are built per record instead of kept. */
const MAX_ERROR_TYPES = 64

/** The attributes every GenAI measurement of one operation, provider and requested model shares. */
function measured(operation: string, provider: string, requestModel: string): Attributes {
  return { 'gen_ai.operation.name': operation, 'gen_ai.provider.name': provider, 'gen_ai.request.model': requestModel }
}

/**
 * What every span and measurement of one kind of call shares: its span name and attribute sets, built once. The SDK
 * copies what it is handed, so the same objects serve every call, where building them per call was a measurable
 * share of its cost; error sets are added as errors are seen.
 */
abstract class Shape {
  /** The span name, `{gen_ai.operation.name} {model}`. */
  readonly name: string
  /** Span attributes known when it starts, for samplers too; the per-call ones are set on the span after. */
  readonly start: Attributes
  /** A duration's attributes when an answer came (`gen_ai.response.model` set). */
  readonly answered: Attributes
  readonly #failed = new Map<string, Attributes>()

  constructor(
    readonly operation: Operation,
    readonly provider: string,
    /** The model this shape's spans name: the client's id for a call, the upstream's name for an attempt. */
    readonly model: string,
    responseModel: string,
    readonly stream: boolean,
  ) {
    const name = operationName(operation)
    this.name = `${name} ${model}`
    this.start = { ...measured(name, provider, model), 'gen_ai.request.stream': stream }
    this.answered = { ...measured(name, provider, model), 'gen_ai.response.model': responseModel }
  }

  /** A duration's attributes when it ended without an answer: `error.type` instead of the response model. */
  failed(errorType: string): Attributes {
    let set = this.#failed.get(errorType)
    if (set !== undefined) return set
    set = { ...measured(operationName(this.operation), this.provider, this.model), 'error.type': errorType }
    if (this.#failed.size < MAX_ERROR_TYPES) this.#failed.set(errorType, set)
    return set
  }
}

/** A model call of one operation, provider, client model id, upstream model name and stream flag. */
export class CallShape extends Shape {
  /** The replayed and joined counters' attributes (a served call has no response of its own). */
  readonly served: Attributes
  /** `gen_ai.client.token.usage`: the gateway is the upstream's client, so its model is the name sent upstream. */
  readonly inputTokens: Attributes
  readonly outputTokens: Attributes

  constructor(
    operation: Operation,
    provider: string,
    model: string,
    readonly upstreamModel: string,
    stream: boolean,
  ) {
    super(operation, provider, model, upstreamModel, stream)
    const name = operationName(operation)
    this.served = measured(name, provider, model)
    const upstream = { ...measured(name, provider, upstreamModel), 'gen_ai.response.model': upstreamModel }
    this.inputTokens = { ...upstream, 'gen_ai.token.type': 'input' }
    this.outputTokens = { ...upstream, 'gen_ai.token.type': 'output' }
  }
}

/** An upstream attempt of one operation, provider, upstream, model name and stream flag. */
export class AttemptShape extends Shape {
  constructor(
    operation: Operation,
    provider: string,
    model: string,
    readonly upstream: string,
    stream: boolean,
  ) {
    super(operation, provider, model, model, stream)
    this.start['model_gateway.upstream'] = upstream
  }
}

/** What identifies a shape in a message. */
interface Described {
  operation: Operation
  provider: string
  model: string
  stream: boolean
}

/**
 * Shapes by model, then by the rest of what tells them apart. Looked up by the message's own strings, which come
 * from the configuration and so are the same objects call after call: no key is built per lookup.
 */
class Shapes<S extends Shape, M extends Described> {
  readonly #byModel = new Map<string, S[]>()
  #size = 0

  constructor(
    private readonly matches: (shape: S, message: M) => boolean,
    private readonly create: (message: M) => S,
  ) {}

  of(message: M): S {
    const list = this.#byModel.get(message.model)
    if (list !== undefined) {
      for (let i = 0; i < list.length; i++) {
        const shape = list[i] as S
        if (shape.operation === message.operation && shape.stream === message.stream && this.matches(shape, message)) return shape
      }
    }
    const shape = this.create(message)
    if (this.#size >= MAX_SHAPES) return shape
    this.#size++
    if (list === undefined) this.#byModel.set(message.model, [shape])
    else list.push(shape)
    return shape
  }
}

/** The shapes of model calls, from `call:start`, `call:end` and `call:served` messages. */
export function callShapes() {
  return new Shapes<CallShape, Described & { upstreamModel: string }>(
    (shape, m) => shape.provider === m.provider && shape.upstreamModel === m.upstreamModel,
    (m) => new CallShape(m.operation, m.provider, m.model, m.upstreamModel, m.stream),
  )
}

/** The shapes of upstream attempts, from `upstream:request` messages. */
export function attemptShapes() {
  return new Shapes<AttemptShape, Described & { upstream: string }>(
    (shape, m) => shape.provider === m.provider && shape.upstream === m.upstream,
    (m) => new AttemptShape(m.operation, m.provider, m.model, m.upstream, m.stream),
  )
}
