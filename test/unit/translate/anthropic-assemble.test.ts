import { describe, expect, it } from 'vitest'
import { assembleMessage } from '../../../src/dialects/anthropic/messages/assemble.js'

const events = (...list: object[]) => list.map((event) => JSON.stringify(event))
const START = {
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } },
}

describe('a Messages stream assembled into its message', () => {
  it('builds tool input from its JSON pieces, at the block’s stop', () => {
    const message = assembleMessage(
      events(
        START,
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '[1,2]}' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7 } },
        { type: 'message_stop' },
      ),
    )
    expect(message).toMatchObject({
      content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: [1, 2] } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 3, output_tokens: 7 },
    })
  })

  it('gives the message so far for a stream cut after its start, and nothing for one cut before', () => {
    const cut = assembleMessage(
      events(
        START,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half an ans' } },
      ),
    )
    expect(cut).toMatchObject({ id: 'msg_1', content: [{ type: 'text', text: 'half an ans' }] })
    expect(assembleMessage(events({ type: 'ping' }))).toBeUndefined()
  })
})
