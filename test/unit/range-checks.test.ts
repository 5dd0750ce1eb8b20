import { describe, expect, it } from 'vitest'
import { validateMessages } from '../../src/dialects/anthropic/validate.js'
import { anthropic, gemini, messages, translatorFor } from '../../src/dialects/index.js'
import { validateChat, validateResponses } from '../../src/dialects/openai/validate.js'
import { GatewayError } from '../../src/errors.js'
import { callInfo, chatToGemini, responsesToGemini } from './translate/helpers.js'

const messagesToGemini = translatorFor(anthropic, gemini, messages.operation)!

/** What the gateway's check of a client's body says of it: the field and message of its 400, or undefined. */
function checked(validate: (body: Record<string, unknown>) => unknown, body: Record<string, unknown>) {
  try {
    validate(body)
    return undefined
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    return { field: error.param, message: error.message }
  }
}

/** What the translation's read of the same body says of it. */
function translated(translator: typeof chatToGemini, body: Record<string, unknown>) {
  const result = translator.request(body, callInfo())
  return result.ok ? undefined : { field: result.field, message: result.message }
}

const user = [{ role: 'user', content: 'x' }]
const chat = { model: 'm', messages: user }
const responses = { model: 'm', input: 'x' }
const claude = { model: 'm', max_tokens: 8, messages: user }

describe("a number's range is checked in one place, its payload's reader: the gateway and translation refuse alike", () => {
  it.each<[string, (body: Record<string, unknown>) => unknown, typeof chatToGemini, Record<string, unknown>, string]>([
    ['chat temperature', validateChat, chatToGemini, { ...chat, temperature: 2.5 }, "'temperature' must be a number from 0 to 2."],
    ['chat penalty', validateChat, chatToGemini, { ...chat, presence_penalty: -3 }, "'presence_penalty' must be a number from -2 to 2."],
    ['chat n', validateChat, chatToGemini, { ...chat, n: 0 }, "'n' must be an integer of at least 1."],
    ['chat max_tokens', validateChat, chatToGemini, { ...chat, max_tokens: 0 }, "'max_tokens' must be an integer of at least 1."],
    ['Responses top_p', validateResponses, responsesToGemini, { ...responses, top_p: 1.5 }, "'top_p' must be a number from 0 to 1."],
    [
      'Messages temperature',
      validateMessages,
      messagesToGemini,
      { ...claude, temperature: 1.5 },
      "'temperature' must be a number from 0 to 1.",
    ],
    [
      'Messages max_tokens',
      validateMessages,
      messagesToGemini,
      { model: 'm', messages: user, max_tokens: -1 },
      "'max_tokens' is required and must be an integer of at least 0.",
    ],
  ])('%s', (_name, validate, translator, body, message) => {
    const field = Object.keys(body).at(-1) as string
    expect(checked(validate, body)).toEqual({ field, message })
    expect(translated(translator, body)).toEqual({ field, message })
  })

  it('a value of the wrong type is named as its reader names it, and a missing max_tokens as required', () => {
    expect(checked(validateChat, { ...chat, temperature: 'hot' })).toEqual({
      field: 'temperature',
      message: "'temperature' must be a number.",
    })
    expect(checked(validateChat, { ...chat, n: 1.5 })).toEqual({ field: 'n', message: "'n' must be an integer." })
    expect(checked(validateMessages, { model: 'm', messages: user })).toEqual({
      field: 'max_tokens',
      message: "'max_tokens' is required and must be an integer of at least 0.",
    })
    expect(checked(validateMessages, { ...claude, max_tokens: 0, temperature: 0, top_p: 1 })).toBeUndefined()
  })
  it("of two members out of range, the first in the body's order is named; a required one is checked first", () => {
    expect(checked(validateChat, { ...chat, top_p: 2, temperature: 3 })).toMatchObject({ field: 'top_p' })
    expect(checked(validateChat, { ...chat, temperature: 3, top_p: 2 })).toMatchObject({ field: 'temperature' })
    expect(checked(validateMessages, { model: 'm', messages: user, temperature: 3 })).toMatchObject({ field: 'max_tokens' })
    // A member the range list does not name is not read, whatever it holds.
    expect(checked(validateChat, { ...chat, seed: 'x', temperature: 1 })).toBeUndefined()
  })
})
