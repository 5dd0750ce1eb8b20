// What a Gemini client asks of a model: generate-content (translated for models of other formats), the embedding
// methods, which are passthrough to models of Gemini upstreams only, and token counting, passthrough there and
// translated for an upstream with a counting method of its own.
import { invariant } from '../../errors.js'
import { type JsonPath, replaceStringsAt } from '../../json/rewrite.js'
import type { CallTarget, OperationFormat } from '../dialect.js'
import { geminiCountFormat } from './generate-content/count.js'
import { generateContentFormat } from './generate-content/index.js'
import { geminiRequest } from './generate-content/wire.js'
import {
  validateBatchEmbedContents,
  validateCountTokens,
  validateEmbedContent,
  validateGeminiAlt,
  validateGenerateContent,
} from './validate.js'

/** Every method here is routed with its model (and, for generate-content, whether it streams). */
function fromPathOf(target: CallTarget | undefined): CallTarget {
  invariant(target, 'a Gemini method is routed with its model')
  return target
}

/**
 * Renames the model where a body names it besides the path, as `models/<id>` or `<id>` (Google requires the name in
 * a batch request to be the path's, so it must follow the path to the upstream's name); other values are left as sent.
 */
function renamer(paths: readonly JsonPath[]): (text: string, from: string, to: string) => string {
  return (text, from, to) =>
    replaceStringsAt(text, paths, (value) => {
      if (value === from) return to
      return value === `models/${from}` ? `models/${to}` : undefined
    })
}

/** `POST …/models/{model}:generateContent` and `:streamGenerateContent`: the model and streaming are in the path. */
export const generateContent: OperationFormat = {
  operation: 'generateContent',
  otelName: 'generate_content',
  hub: generateContentFormat,
  checkQuery: (query, stream) => validateGeminiAlt(stream, query.get('alt')),
  modelInBody: false,
  readFields: geminiRequest.gatewayReads,
  keepsRecords: true,
  read(fields, fromPath) {
    const target = fromPathOf(fromPath)
    validateGenerateContent(fields)
    return target
  },
}

/** `POST …/models/{model}:embedContent`: one embedding; the body may name the model again in `model`. */
export const embedContent: OperationFormat = {
  operation: 'embedContent',
  otelName: 'embeddings',
  modelInBody: false,
  renameInBody: renamer([['model']]),
  readFields: new Set(['content', 'model']),
  keepsRecords: true,
  untranslated: 'embeddings',
  read(fields, fromPath) {
    const target = fromPathOf(fromPath)
    validateEmbedContent(fields)
    return target
  },
}

/** `POST …/models/{model}:batchEmbedContents`: many embeddings, each request naming the model as `models/<id>`. */
export const batchEmbedContents: OperationFormat = {
  operation: 'batchEmbedContents',
  otelName: 'embeddings',
  modelInBody: false,
  renameInBody: renamer([['requests', '*', 'model']]),
  readFields: new Set(['requests']),
  elementFields: ['content'],
  keepsRecords: true,
  untranslated: 'embeddings',
  read(fields, fromPath) {
    const target = fromPathOf(fromPath)
    validateBatchEmbedContents(fields)
    return target
  },
}

/**
 * `POST …/models/{model}:countTokens`: free upstream, so an answer its client left is not kept. A model of another
 * format is counted by its upstream's own counting method (Anthropic's `/v1/messages/count_tokens`, OpenAI's
 * `/responses/input_tokens`), where it has one.
 */
export const countTokens: OperationFormat = {
  operation: 'countTokens',
  // The conventions name no operation for counting tokens.
  otelName: 'count_tokens',
  modelInBody: false,
  renameInBody: renamer([
    ['generateContentRequest', 'model'],
    ['generate_content_request', 'model'],
  ]),
  readFields: new Set(['contents', 'generateContentRequest', 'generate_content_request']),
  keepsRecords: false,
  countsTokens: true,
  untranslated: 'token counts',
  counting: geminiCountFormat,
  read(fields, fromPath) {
    const target = fromPathOf(fromPath)
    validateCountTokens(fields)
    return target
  },
}
