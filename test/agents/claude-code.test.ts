import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_BINARIES, type AgentGateway, CLIENT_KEY, installAgents, runAgent, scratchHome, startAgentGateway } from './support.js'

const notInstalled = await installAgents('claude')

/** The model ids Claude Code is run with, and the upstream each is served by. */
const MODELS = [
  { id: 'claude-sonnet-4-5', upstream: 'anthropic' },
  { id: 'claude-on-openai', upstream: 'openai', upstreamModel: 'gpt-4o-mini' },
  { id: 'claude-on-gemini', upstream: 'gemini', upstreamModel: 'gemini-2.5-flash' },
  { id: 'claude-on-responses', upstream: 'responses', upstreamModel: 'gpt-5-codex' },
]

/** Claude Code in print mode against the gateway, with nothing sent anywhere else. */
function claude(gw: AgentGateway, model: string, prompt: string, extra: readonly string[] = []) {
  const home = scratchHome()
  return runAgent(AGENT_BINARIES.claude, ['-p', '--model', model, ...extra, '--', prompt], {
    HOME: home,
    ANTHROPIC_BASE_URL: gw.url,
    ANTHROPIC_API_KEY: CLIENT_KEY,
    // Background work (titles, summaries) asks for the small model: the same one, so every call is one we serve.
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  })
}

describe.skipIf(notInstalled !== undefined)(
  `Claude Code (claude -p) through the gateway${notInstalled ? `: skipped, ${notInstalled}` : ''}`,
  () => {
    let gw: AgentGateway
    beforeAll(async () => {
      gw = await startAgentGateway(MODELS)
    })
    afterAll(() => gw?.close())

    describe.each(MODELS)('on $id (an $upstream upstream)', ({ id }) => {
      it('answers a prompt with the model’s text, with no call refused', async () => {
        const marker = `text-${id}`
        gw.mock.steer(marker, { content: `the gateway answered ${marker}` })
        const since = gw.refusals.length
        const run = await claude(gw, id, `Say the word ${marker}.`)
        expect(run.stderr).not.toMatch(/issue with the selected model/i)
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        expect(run.stdout).toContain(`the gateway answered ${marker}`)
        // Claude Code retries a refused call without the field named, so a refusal costs a round trip, not the answer.
        expect(gw.refusals.slice(since)).toEqual([])
      })

      it('runs a Bash tool round trip: the command’s output goes back to the model, its answer comes out', async () => {
        const marker = `tool-${id}`
        gw.mock.steer(marker, { tool_name: 'Bash', tool_arguments: { command: `echo $((6*7))-${marker}`, description: 'Print a marker' } })
        const before = gw.mock.requests.length
        const run = await claude(gw, id, `Run the shell command for ${marker}.`, ['--allowedTools', 'Bash'])
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        // The second model call carries the tool's output; the mock answers `Tool said: …` with it.
        const calls = gw.mock.requests.slice(before).filter((request) => request.method === 'POST')
        expect(calls.some((request) => request.body.includes(`42-${marker}`))).toBe(true)
        // The command ran: its output (not its text, which holds `$((6*7))`) went back to the model and its answer out.
        expect(run.stdout).toContain(`42-${marker}`)
      })
    })

    it('keeps a Gemini thought signature through its tool loop: it rides in a thinking block and goes back to Gemini', async () => {
      const marker = 'signed-claude-on-gemini'
      const signature = 'gemini-thought-signature-for-claude-code'
      gw.mock.steer(marker, {
        tool_name: 'Bash',
        tool_arguments: { command: `echo $((6*7))-${marker}`, description: 'Print a marker' },
        thought_signature: signature,
      })
      const before = gw.mock.requests.length
      const run = await claude(gw, 'claude-on-gemini', `Run the shell command for ${marker}.`, ['--allowedTools', 'Bash'])
      expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
      // The Gemini request that carries the function's response gives the call its signature back.
      const answered = gw.mock.requests.slice(before).find((request) => request.body.includes(`42-${marker}`))
      expect(answered?.body).toContain(`"thoughtSignature":"${signature}"`)
      expect(run.stdout).toContain(`42-${marker}`)
    })
  },
)
