import type { Counter, Histogram, Meter } from '@opentelemetry/api'

/** Bucket boundaries the GenAI conventions advise for each histogram. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
const FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]

/** The metrics `instrumentGateway` records. */
export interface Instruments {
  tokenUsage: Histogram
  clientDuration: Histogram
  serverDuration: Histogram
  timeToFirstToken: Histogram
  recoveriesKept: Counter
  callsReplayed: Counter
  callsJoined: Counter
  recoveriesFetched: Counter
  /** Nano-dollars spent, from `pricing`. */
  cost: Counter
  /** Calls the ledger refused before they went upstream, by `error.type`. */
  callsRefused: Counter
  /** Model calls the response cache looked up, by `model_gateway.cache` (`hit` or `miss`). */
  cacheLookups: Counter
}

/** Creates the instruments on `meter`, named and bucketed as the GenAI conventions say (gateway counters as `model_gateway.*`). */
export function createInstruments(meter: Meter): Instruments {
  const seconds = (name: string, description: string, buckets: number[]) =>
    meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } })
  return {
    tokenUsage: meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Number of input and output tokens used.',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    clientDuration: seconds('gen_ai.client.operation.duration', 'GenAI operation duration.', DURATION_BUCKETS),
    serverDuration: seconds('gen_ai.server.request.duration', 'Generative AI server request duration.', DURATION_BUCKETS),
    timeToFirstToken: seconds(
      'gen_ai.server.time_to_first_token',
      'Time to generate first token for successful responses.',
      FIRST_TOKEN_BUCKETS,
    ),
    recoveriesKept: meter.createCounter('model_gateway.recovery.kept', {
      unit: '{record}',
      description: 'Responses kept as recovery records because their client left.',
    }),
    callsReplayed: meter.createCounter('model_gateway.call.replayed', {
      unit: '{call}',
      description: 'Model calls answered with a kept answer instead of going upstream again.',
    }),
    callsJoined: meter.createCounter('model_gateway.call.joined', {
      unit: '{call}',
      description: 'Model calls that joined the same call still running instead of going upstream again.',
    }),
    recoveriesFetched: meter.createCounter('model_gateway.recovery.fetched', {
      unit: '{record}',
      description: 'Recovery records fetched by their owner.',
    }),
    cost: meter.createCounter('model_gateway.call.cost', {
      unit: 'n[USD]',
      description: 'Cost of model calls in nano-dollars (USD × 10⁹), priced by the gateway’s pricing option.',
    }),
    callsRefused: meter.createCounter('model_gateway.call.refused', {
      unit: '{call}',
      description: 'Model calls refused by the per-owner limits before they went upstream (error.type: the reason).',
    }),
    cacheLookups: meter.createCounter('model_gateway.cache', {
      unit: '{call}',
      description: 'Model calls the response cache looked up (model_gateway.cache: hit or miss).',
    }),
  }
}
