// Deterministic request bodies. The two large ones are valid chat requests of a given UTF-8 size:
// one is a few very long messages (text-heavy: escapes and non-ASCII included), the other many
// small message objects whose keys are not in canonical order, as real clients send them. The seeded
// source is the tests' one, so every run and every process builds the same bytes.

import { mulberry32 } from './random.mjs'

export const SMALL_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a terse assistant.' },
    { role: 'user', content: 'Say hello in one word.' },
  ],
  temperature: 0.2,
})

export const STREAM_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Count to sixty-four.' }],
  stream: true,
})

const WORDS = [
  'the',
  'model',
  'gateway',
  'answers',
  'every',
  'request',
  'with',
  'a',
  'stream',
  'of',
  'tokens',
  'and',
  'keeps',
  'what',
  'the',
  'network',
  'lost',
  'résumé',
  'naïve',
  '证明',
  '费马',
  'Ωmega',
  'quote"d',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  'emoji🙂',
  'JSON',
  'parse',
  'stringify',
  'hash',
  'canonical',
]

function prose(next, approxChars) {
  const parts = []
  let length = 0
  while (length < approxChars) {
    const word = WORDS[Math.floor(next() * WORDS.length)]
    parts.push(word)
    length += word.length + 1
  }
  return parts.join(' ')
}

/** ~`bytes` of JSON: four long messages. @param {number} bytes */
export function textHeavyBody(bytes) {
  const next = mulberry32(1)
  // UTF-8 and escaping make the JSON ~1.1× the characters of the prose; aim a little low, then pad.
  const share = Math.floor(bytes / 4.5)
  const body = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: prose(next, share / 4) },
      { role: 'user', content: prose(next, share) },
      { role: 'assistant', content: prose(next, share) },
      { role: 'user', content: prose(next, share) },
    ],
    temperature: 0.7,
  }
  return pad(body, bytes, (b, text) => {
    b.messages[3].content += ` ${text}`
  })
}

/** ~`bytes` of JSON: many small message objects, keys in client order (not sorted). @param {number} bytes */
export function manyObjectsBody(bytes) {
  const next = mulberry32(2)
  const messages = []
  const body = { model: 'gpt-4o-mini', messages, temperature: 0.7, user: 'bench' }
  let size = 80
  for (let i = 0; size < bytes - 200; i++) {
    const message = {
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: prose(next, 24),
      name: `p${i % 97}`,
      meta: { turn: i, score: Math.round(next() * 1000) / 1000, ok: i % 3 !== 0 },
    }
    size += Buffer.byteLength(JSON.stringify(message)) + 1
    messages.push(message)
  }
  return pad(body, bytes, (b, text) => {
    b.user += text
  })
}

function pad(body, bytes, append) {
  let text = JSON.stringify(body)
  const missing = bytes - Buffer.byteLength(text)
  if (missing > 0) {
    append(body, 'x'.repeat(missing - 1))
    text = JSON.stringify(body)
  }
  return text
}
