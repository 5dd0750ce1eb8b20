import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_BINARIES, type AgentGateway, CLIENT_KEY, installAgents, runAgent, scratchHome, startAgentGateway } from './support.js'

const notInstalled = await installAgents('codex')

const MODELS = [
  { id: 'codex-on-gemini', upstream: 'gemini', upstreamModel: 'gemini-2.5-flash' },
  { id: 'codex-on-claude', upstream: 'anthropic', upstreamModel: 'claude-sonnet-4-5' },
  { id: 'gpt-5-codex', upstream: 'openai' },
]

/**
 * `codex exec` with a custom provider at the gateway, speaking Responses, as its documentation configures one; with
 * `websockets`, over one WebSocket per session (`supports_websockets = true`).
 */
function codex(gw: AgentGateway, model: string, prompt: string, websockets = false) {
  const home = scratchHome()
  const codexHome = path.join(home, '.codex')
  mkdirSync(codexHome, { recursive: true })
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "gateway"',
      '',
      '[model_providers.gateway]',
      'name = "model-gateway"',
      `base_url = "${gw.url}/v1"`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      ...(websockets ? ['supports_websockets = true'] : []),
      '',
    ].join('\n'),
  )
  return runAgent(
    process.execPath,
    [AGENT_BINARIES.codex, 'exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt],
    { HOME: home, CODEX_HOME: codexHome, GATEWAY_API_KEY: CLIENT_KEY, NO_COLOR: '1' },
  )
}

describe.skipIf(notInstalled !== undefined)(
  `Codex CLI (codex exec) through the gateway${notInstalled ? `: skipped, ${notInstalled}` : ''}`,
  () => {
    let gw: AgentGateway
    beforeAll(async () => {
      gw = await startAgentGateway(MODELS)
    })
    afterAll(() => gw?.close())

    describe.each(MODELS)('on $id (an $upstream upstream)', ({ id }) => {
      it('answers a prompt with the model’s text', async () => {
        const marker = `text-${id}`
        gw.mock.steer(marker, { content: `the gateway answered ${marker}` })
        const run = await codex(gw, id, `Say the word ${marker}.`)
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        expect(run.stdout).toContain(`the gateway answered ${marker}`)
      })

      it('runs an exec_command round trip: the command’s output goes back to the model, its answer comes out', async () => {
        const marker = `tool-${id}`
        gw.mock.steer(marker, { tool_name: 'exec_command', tool_arguments: { cmd: `echo $((6*7))-${marker}` } })
        const before = gw.mock.requests.length
        const run = await codex(gw, id, `Run the shell command for ${marker}.`)
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        const calls = gw.mock.requests.slice(before).filter((request) => request.method === 'POST')
        expect(
          calls.some(
            (request) =>
              request.body.includes('function_call_output') ||
              request.body.includes('tool_result') ||
              request.body.includes('functionResponse'),
          ),
        ).toBe(true)
        // The command ran: its output (not its text, which holds `$((6*7))`) went back to the model and its answer out.
        expect(run.stdout).toContain(`42-${marker}`)
      })
    })

    describe.each(MODELS)('over a WebSocket (supports_websockets = true), on $id', ({ id }) => {
      /** Runs Codex over its WebSocket and checks it never fell back to HTTP: no `POST /v1/responses`, no refused upgrade. */
      async function overSocket(prompt: string) {
        const before = gw.seen.length
        const refusalsBefore = gw.refusals.length
        const run = await codex(gw, id, prompt, true)
        const seen = gw.seen.slice(before)
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        expect(seen).toContain('UPGRADE /v1/responses')
        expect(seen.filter((line) => line === 'POST /v1/responses')).toEqual([])
        expect(gw.refusals.slice(refusalsBefore)).toEqual([])
        return run
      }

      it('answers a prompt with the model’s text', async () => {
        const marker = `say-over-socket-${id}`
        gw.mock.steer(marker, { content: `the gateway answered ${marker}` })
        const run = await overSocket(`Say the word ${marker}.`)
        expect(run.stdout).toContain(`the gateway answered ${marker}`)
      })

      it('runs an exec_command round trip, each turn sending only its new items', async () => {
        const marker = `run-over-socket-${id}`
        gw.mock.steer(marker, { tool_name: 'exec_command', tool_arguments: { cmd: `echo $((6*7))-${marker}` } })
        const before = gw.mock.requests.length
        const run = await overSocket(`Run the shell command for ${marker}.`)
        // The upstream got the command's output with the conversation before it, carried by the gateway.
        const answered = gw.mock.requests.slice(before).find((request) => request.body.includes(`42-${marker}`))
        expect(answered?.body).toContain(`Run the shell command for ${marker}.`)
        expect(run.stdout).toContain(`42-${marker}`)
      })
    })

    it('keeps a Gemini thought signature through its tool loop: it rides in a reasoning item and goes back to Gemini', async () => {
      const marker = 'signed-codex-on-gemini'
      const signature = 'gemini-thought-signature-for-codex'
      gw.mock.steer(marker, { tool_name: 'exec_command', tool_arguments: { cmd: `echo $((6*7))-${marker}` }, thought_signature: signature })
      const before = gw.mock.requests.length
      const run = await codex(gw, 'codex-on-gemini', `Run the shell command for ${marker}.`)
      expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
      const answered = gw.mock.requests.slice(before).find((request) => request.body.includes(`42-${marker}`))
      expect(answered?.body).toContain(`"thoughtSignature":"${signature}"`)
      expect(run.stdout).toContain(`42-${marker}`)
    })
  },
)
