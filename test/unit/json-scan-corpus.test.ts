import { describe, expect, it } from 'vitest'
import { checkDocument, outcomes } from '../support/json-agreement.js'
import { documentText, Gen, mutate, SPECIAL_BYTES, SPECIAL_TEXTS } from '../support/json-corpus.js'

describe('scanJsonObject', () => {
  it('agrees with JSON.parse and validation on a seeded corpus, mutations and edge cases, in 7-byte slices', async () => {
    const g = new Gen(20240611)
    let documents = 0
    const check = async (bytes: Buffer) => {
      documents++
      await checkDocument(bytes)
    }
    for (const text of SPECIAL_TEXTS) await check(Buffer.from(text, 'utf8'))
    for (const bytes of SPECIAL_BYTES) await check(bytes)
    for (let k = 0; k < 3000; k++) {
      const bytes = Buffer.from(documentText(g), 'utf8')
      await check(bytes)
      for (let m = g.int(3); m >= 0; m--) await check(mutate(g, bytes))
      if (g.chance(0.1)) await check(mutate(g, mutate(g, bytes)))
    }
    expect(documents).toBeGreaterThan(7000)
    // The corpus reaches every branch that matters: passes, each failing field, big values, every error kind.
    expect(outcomes.chatPass).toBeGreaterThan(100)
    expect(outcomes.geminiPass).toBeGreaterThan(100)
    expect(outcomes.bigStrings).toBeGreaterThan(10)
    expect(outcomes.rejected).toBeGreaterThan(2000)
    expect(outcomes.notObject).toBeGreaterThan(100)
    for (const param of [
      'model',
      'messages',
      'messages[i]',
      'messages[i].role',
      'stream',
      'temperature',
      'top_p',
      'presence_penalty',
      'frequency_penalty',
      'n',
      'max_tokens',
      'max_completion_tokens',
      'contents',
      'contents[i]',
    ]) {
      expect([...outcomes.params], param).toContain(param)
    }
  })
})
