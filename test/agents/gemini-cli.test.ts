import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_BINARIES, type AgentGateway, CLIENT_KEY, installAgents, runAgent, scratchHome, startAgentGateway } from './support.js'

const notInstalled = await installAgents('gemini')

/** The model ids Gemini CLI is run with, and the upstream each is served by. */
const MODELS = [
  { id: 'gemini-2.5-flash', upstream: 'gemini' },
  { id: 'gemini-on-openai', upstream: 'openai', upstreamModel: 'gpt-4o-mini' },
  { id: 'gemini-on-claude', upstream: 'anthropic', upstreamModel: 'claude-sonnet-4-5' },
]

/**
 * `gemini -p` with the gateway as its Gemini API: an API key chosen as its way in (print mode asks nothing), the
 * workspace trusted, and auto-update, usage statistics and telemetry off in its settings file.
 */
function gemini(gw: AgentGateway, model: string, prompt: string) {
  const home = scratchHome()
  const settings = path.join(home, '.gemini')
  mkdirSync(settings, { recursive: true })
  writeFileSync(
    path.join(settings, 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    }),
  )
  return runAgent(process.execPath, [AGENT_BINARIES.gemini, '-m', model, '--yolo', '-p', prompt], {
    HOME: home,
    GOOGLE_GEMINI_BASE_URL: gw.url,
    GEMINI_API_KEY: CLIENT_KEY,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_COLOR: '1',
  })
}

/** The calls the gateway refused (a 4xx it answered itself), by path and the field it named. */
function refused(gw: AgentGateway, since: number): string[] {
  return gw.refusals.slice(since)
}

describe.skipIf(notInstalled !== undefined)(
  `Gemini CLI (gemini -p) through the gateway${notInstalled ? `: skipped, ${notInstalled}` : ''}`,
  () => {
    let gw: AgentGateway
    beforeAll(async () => {
      gw = await startAgentGateway(MODELS)
    })
    afterAll(() => gw?.close())

    describe.each(MODELS)('on $id (a $upstream upstream)', ({ id }) => {
      it('answers a prompt with the model’s text, with no call refused', async () => {
        const marker = `text-${id}`
        gw.mock.steer(marker, { content: `the gateway answered ${marker}` })
        const since = gw.refusals.length
        const run = await gemini(gw, id, `Say the word ${marker}.`)
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        expect(run.stdout).toContain(`the gateway answered ${marker}`)
        expect(refused(gw, since)).toEqual([])
      })

      it('runs a shell tool round trip: the command’s output goes back to the model, its answer comes out', async () => {
        const marker = `tool-${id}`
        gw.mock.steer(marker, {
          tool_name: 'run_shell_command',
          // Gemini CLI blocks command substitution, `$((…))` too: the output differs from the command's text by case.
          tool_arguments: { command: `echo ${marker} | tr a-z A-Z`, description: 'Print a marker' },
        })
        const before = gw.mock.requests.length
        const run = await gemini(gw, id, `Run the shell command for ${marker}.`)
        expect(run.code, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0)
        // The second model call carries the tool's output; the mock answers `Tool said: …` with it.
        const calls = gw.mock.requests.slice(before).filter((request) => request.method === 'POST')
        const output = marker.toUpperCase()
        expect(calls.some((request) => request.body.includes(output))).toBe(true)
        expect(run.stdout).toContain(output)
      })
    })
  },
)
