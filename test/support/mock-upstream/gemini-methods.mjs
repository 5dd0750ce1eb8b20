// The Gemini methods besides generate-content: embedContent, batchEmbedContents and countTokens, as strict as the
// real API about the fields they take and the model a body names.

import {
  badRequestBody,
  bothSpellings,
  field,
  GEMINI_JSON_TYPE,
  geminiText,
  REQUEST_FIELDS,
  sendGoogleError,
  unknownFields,
  unknownNames,
} from './gemini.mjs'
import { send } from './respond.mjs'
import { DEFAULT_DIMENSIONS, embeddingOf, isObject, JSON_TYPE, tokens } from './shared.mjs'

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

/** The model a path names, percent-decoded as Google reads it. @param {RegExpExecArray} route */
function pathModel(route) {
  try {
    return decodeURIComponent(/** @type {string} */ (route[1]))
  } catch {
    return /** @type {string} */ (route[1])
  }
}

/**
 * What is wrong with one embedding request (`at` names it inside a batch): unknown fields, no content with parts, a
 * model other than the path's (Google requires the same, spelt `models/<model>`), a bad task type or dimensionality.
 * @param {Record<string, any>} request @param {string} model @param {string | undefined} at @param {boolean} modelRequired
 * @returns {{ field?: string, description: string }[]}
 */
function embedViolations(request, model, at, modelRequired) {
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
  if (task !== undefined && !TASK_TYPES.has(task)) {
    violations.push({ field: `${where}task_type`, description: `Invalid value at '${where}task_type': "${task}"` })
  }
  const dims = field(request, 'outputDimensionality')
  if (dims !== undefined && !(Number.isInteger(dims) && dims >= 1)) {
    violations.push({ field: `${where}output_dimensionality`, description: `Invalid value at '${where}output_dimensionality'` })
  }
  return violations
}

/** The embedding of one (valid) request. @param {Record<string, any>} request */
const embeddingFor = (request) => ({
  values: embeddingOf(geminiText(field(request, 'content')), field(request, 'outputDimensionality') ?? DEFAULT_DIMENSIONS),
})

/**
 * Answer `:embedContent` (`{ embedding }`) or `:batchEmbedContents` (`{ embeddings }`, one per request, in order).
 * Neither carries usage, as Google's do not.
 * @param {RegExpExecArray} route A match of `GEMINI_PATH`. @param {Record<string, any>} body
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st
 */
export function answerEmbed(route, body, res, st) {
  const model = pathModel(route)
  if (route[2] === 'embedContent') {
    const refused = badRequestBody(embedViolations(body, model, undefined, false))
    if (refused !== undefined) send(res, st, 400, GEMINI_JSON_TYPE, refused)
    else send(res, st, 200, JSON_TYPE, JSON.stringify({ embedding: embeddingFor(body) }))
    return
  }
  const violations = unknownNames(body, BATCH_FIELDS)
  const requests = body.requests
  if (!Array.isArray(requests) || requests.length === 0) {
    violations.push({ field: 'requests', description: '* BatchEmbedContentsRequest.requests: requests is not specified' })
  } else {
    requests.forEach((request, i) => {
      if (isObject(request)) violations.push(...embedViolations(request, model, `requests[${i}]`, true))
      else violations.push({ field: `requests[${i}]`, description: `Invalid value at 'requests[${i}]'` })
    })
  }
  const refused = badRequestBody(violations)
  if (refused !== undefined) send(res, st, 400, GEMINI_JSON_TYPE, refused)
  else send(res, st, 200, JSON_TYPE, JSON.stringify({ embeddings: requests.map(embeddingFor) }))
}

/**
 * Answer `:countTokens`: `contents`, or a whole `generateContentRequest` naming the path's model (never both), counted
 * as generate-content would count its prompt (system instruction included).
 * @param {RegExpExecArray} route A match of `GEMINI_PATH`. @param {Record<string, any>} body
 * @param {import('node:http').ServerResponse} res @param {import('./respond.mjs').State} st
 */
export function answerCountTokens(route, body, res, st) {
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
  /** @type {Record<string, any>} */
  let prompt = body
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
  if (!Array.isArray(prompt.contents)) {
    sendGoogleError(res, st, 400, '* CountTokensRequest.contents: contents is not specified')
    return
  }
  let length = geminiText(field(prompt, 'systemInstruction')).length
  for (const content of prompt.contents) length += geminiText(content).length
  const total = tokens(length)
  send(res, st, 200, JSON_TYPE, JSON.stringify({ totalTokens: total, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] }))
}
