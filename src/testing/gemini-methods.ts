// The Gemini methods besides generate-content: embedContent, batchEmbedContents and countTokens, as strict as the
// real API about the fields they take and the model a body names.

import type { ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import {
  badRequestBody,
  bothSpellings,
  field,
  GEMINI_JSON_TYPE,
  type GeminiRoute,
  geminiText,
  REQUEST_FIELDS,
  sendGoogleError,
  unknownFields,
  unknownNames,
  type Violation,
} from './gemini.js'
import { type State, send } from './respond.js'
import { DEFAULT_DIMENSIONS, embeddingOf, JSON_TYPE, type JsonObject, tokens } from './shared.js'

/** The fields of an EmbedContentRequest. */
const EMBED_FIELDS = bothSpellings(['model', 'content', 'taskType', 'title', 'outputDimensionality'])
/** The fields of a BatchEmbedContentsRequest. */
const BATCH_FIELDS = bothSpellings(['requests', 'mock'])
/** The fields of a CountTokensRequest. */
const COUNT_FIELDS = bothSpellings(['contents', 'generateContentRequest', 'mock'])

const TASK_TYPES = new Set([
  'TASK_TYPE_UNSPECIFIED',
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
])

/** The model a path names, percent-decoded as Google reads it. */
function pathModel(route: GeminiRoute): string {
  const model = route[1] ?? ''
  try {
    return decodeURIComponent(model)
  } catch {
    return model
  }
}

/**
 * What is wrong with one embedding request (`at` names it inside a batch): unknown fields, no content with parts, a
 * model other than the path's (Google requires the same, spelt `models/<model>`), a bad task type or dimensionality.
 */
function embedViolations(request: JsonObject, model: string, at: string | undefined, modelRequired: boolean): Violation[] {
  const violations = unknownNames(request, at === undefined ? new Set([...EMBED_FIELDS, 'mock']) : EMBED_FIELDS, at)
  const where = at === undefined ? '' : `${at}.`
  const content = field(request, 'content')
  if (!isObject(content) || !Array.isArray(content.parts) || content.parts.length === 0) {
    violations.push({ field: `${where}content`, description: `* EmbedContentRequest.${where}content: content is not specified` })
  }
  const named = request.model
  if ((named !== undefined || modelRequired) && named !== `models/${model}`) {
    violations.push({
      field: `${where}model`,
      description: `* EmbedContentRequest.${where}model: the model '${named}' must be the request's model, models/${model}`,
    })
  }
  const task = field(request, 'taskType')
  if (task !== undefined && !(typeof task === 'string' && TASK_TYPES.has(task))) {
    violations.push({ field: `${where}task_type`, description: `Invalid value at '${where}task_type': "${task}"` })
  }
  const dims = field(request, 'outputDimensionality')
  if (dims !== undefined && !(typeof dims === 'number' && Number.isInteger(dims) && dims >= 1)) {
    violations.push({ field: `${where}output_dimensionality`, description: `Invalid value at '${where}output_dimensionality'` })
  }
  return violations
}

/** The embedding of one (valid) request: its dimensionality, when given, is a positive integer. */
function embeddingFor(request: JsonObject): { values: number[] } {
  const dims = field(request, 'outputDimensionality')
  return { values: embeddingOf(geminiText(field(request, 'content')), typeof dims === 'number' ? dims : DEFAULT_DIMENSIONS) }
}

/**
 * Answer `:embedContent` (`{ embedding }`) or `:batchEmbedContents` (`{ embeddings }`, one per request, in order).
 * Neither carries usage, as Google's do not. `route` is the call's path, model and method.
 */
export function answerEmbed(route: GeminiRoute, body: JsonObject, res: ServerResponse, st: State): void {
  const model = pathModel(route)
  if (route[2] === 'embedContent') {
    const refused = badRequestBody(embedViolations(body, model, undefined, false))
    if (refused !== undefined) send(res, st, 400, GEMINI_JSON_TYPE, refused)
    else send(res, st, 200, JSON_TYPE, JSON.stringify({ embedding: embeddingFor(body) }))
    return
  }
  const violations = unknownNames(body, BATCH_FIELDS)
  const requests = body.requests
  // Without violations, every request is an object and `embeddable` holds them all, in order.
  const embeddable: JsonObject[] = []
  if (!Array.isArray(requests) || requests.length === 0) {
    violations.push({ field: 'requests', description: '* BatchEmbedContentsRequest.requests: requests is not specified' })
  } else {
    requests.forEach((request, i) => {
      if (isObject(request)) {
        violations.push(...embedViolations(request, model, `requests[${i}]`, true))
        embeddable.push(request)
      } else violations.push({ field: `requests[${i}]`, description: `Invalid value at 'requests[${i}]'` })
    })
  }
  const refused = badRequestBody(violations)
  if (refused !== undefined) send(res, st, 400, GEMINI_JSON_TYPE, refused)
  else send(res, st, 200, JSON_TYPE, JSON.stringify({ embeddings: embeddable.map(embeddingFor) }))
}

/**
 * Answer `:countTokens`: `contents`, or a whole `generateContentRequest` naming the path's model (never both), counted
 * as generate-content would count its prompt (system instruction included). `route` is the call's path, model and method.
 */
export function answerCountTokens(route: GeminiRoute, body: JsonObject, res: ServerResponse, st: State): void {
  const model = pathModel(route)
  const unknown = badRequestBody(unknownNames(body, COUNT_FIELDS))
  if (unknown !== undefined) {
    send(res, st, 400, GEMINI_JSON_TYPE, unknown)
    return
  }
  const request = field(body, 'generateContentRequest')
  if (request !== undefined && body.contents !== undefined) {
    sendGoogleError(res, st, 400, 'contents and generate_content_request are mutually exclusive.')
    return
  }
  let prompt: JsonObject = body
  if (request !== undefined) {
    const refused = isObject(request) ? unknownFields(request, new Set([...REQUEST_FIELDS, 'model'])) : undefined
    if (refused !== undefined) {
      send(res, st, 400, GEMINI_JSON_TYPE, refused)
      return
    }
    if (!isObject(request) || request.model !== `models/${model}`) {
      sendGoogleError(res, st, 400, `* CountTokensRequest.generate_content_request.model: must be the request's model, models/${model}`)
      return
    }
    prompt = request
  }
  const contents = prompt.contents
  if (!Array.isArray(contents)) {
    sendGoogleError(res, st, 400, '* CountTokensRequest.contents: contents is not specified')
    return
  }
  let length = geminiText(field(prompt, 'systemInstruction')).length
  for (const content of contents) length += geminiText(content).length
  const total = tokens(length)
  send(res, st, 200, JSON_TYPE, JSON.stringify({ totalTokens: total, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] }))
}
