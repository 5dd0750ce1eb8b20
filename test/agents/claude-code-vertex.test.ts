import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_BINARIES, type AgentGateway, CLIENT_KEY, installAgents, runAgent, scratchHome, startAgentGateway } from './support.js'

const notInstalled = await installAgents('claude')

/** The model ids Claude Code in Vertex mode is run with, and the upstream each is served by. */
const MODELS = [
  { id: 'claude-sonnet-4-5', upstream: 'anthropic' },
  { id: 'claude-on-openai', upstream: 'openai', upstreamModel: 'gpt-4o-mini' },
]

/** The project and region Claude Code puts in its paths: accepted by the gateway, never forwarded. */
const PROJECT = 'agent-project'
const REGION = 'us-east5'

/**
 * Claude Code in print mode and Vertex mode against the gateway: Google auth skipped, the gateway key in a custom
 * header, thinking on, nothing sent anywhere else. `home` is its home and working folder (a session lives there).
 */
function claudeVertex(gw: AgentGateway, model: string, prompt: string, extra: readonly string[] = [], home = scratchHome()) {
  return runAgent(AGENT_BINARIES.claude, ['-p', '--model', model, ...extra, '--', prompt], {
    HOME: home,
    CLAUDE_CODE_USE_VERTEX: '1',
    CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
    ANTHROPIC_VERTEX_BASE_URL: `${gw.url}/v1`,
    ANTHROPIC_VERTEX_PROJECT_ID: PROJECT,
    CLOUD_ML_REGION: REGION,
    ANTHROPIC_CUSTOM_HEADERS: `x-api-key: ${CLIENT_KEY}`,
    MAX_THINKING_TOKENS: '2048',
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  })
}

const output = (run: { stdout: string; stderr: string }) => `${run.stdout}\n${run.stderr}`.slice(-3000)

describe.skipIf(notInstalled !== undefined)(
  `Claude Code in Vertex mode (CLAUDE_CODE_USE_VERTEX=1) through the gateway${notInstalled ? `: skipped, ${notInstalled}` : ''}`,
  () => {
    let gw: AgentGateway
    beforeAll(async () => {
      gw = await startAgentGateway(MODELS)
    })
    afterAll(() => gw?.close())

    /** The Vertex paths the gateway was asked since `since`. */
    const vertexCalls = (since: number) => gw.seen.slice(since).filter((line) => line.includes('/publishers/anthropic/models/'))

    describe.each(MODELS)('on $id (an $upstream upstream)', ({ id }) => {
      it('answers a prompt with the model’s text over :streamRawPredict, with no call refused', async () => {
        const marker = `vertex-text-${id}`
        gw.mock.steer(marker, { content: `the gateway answered ${marker}` })
        const since = gw.refusals.length
        const seen = gw.seen.length
        const run = await claudeVertex(gw, id, `Say the word ${marker}.`)
        expect(run.code, output(run)).toBe(0)
        expect(run.stdout).toContain(`the gateway answered ${marker}`)
        expect(gw.refusals.slice(since)).toEqual([])
        expect(vertexCalls(seen)).toContain(
          `POST /v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${id}:streamRawPredict`,
        )
      })

      it('runs a Bash tool round trip: the command’s output goes back to the model, its answer comes out', async () => {
        const marker = `vertex-tool-${id}`
        gw.mock.steer(marker, { tool_name: 'Bash', tool_arguments: { command: `echo $((6*7))-${marker}`, description: 'Print a marker' } })
        const before = gw.mock.requests.length
        const run = await claudeVertex(gw, id, `Run the shell command for ${marker}.`, ['--allowedTools', 'Bash'])
        expect(run.code, output(run)).toBe(0)
        const calls = gw.mock.requests.slice(before).filter((request) => request.method === 'POST')
        expect(calls.some((request) => request.body.includes(`42-${marker}`))).toBe(true)
        expect(run.stdout).toContain(`42-${marker}`)
      })

      it('keeps a session going with thinking on: write a file, read it, edit it, run a command over it', async () => {
        const home = scratchHome()
        const file = path.join(home, 'notes.txt')
        const tools = ['--allowedTools', 'Write', 'Read', 'Edit', 'Bash']
        const since = gw.refusals.length
        const before = gw.mock.requests.length
        // One step a turn, each continuing the session: the mock calls the tool a step's marker steers it to.
        const steps = [
          { tool: 'Write', args: { file_path: file, content: `alpha ${id}\n` } },
          { tool: 'Read', args: { file_path: file } },
          { tool: 'Edit', args: { file_path: file, old_string: 'alpha', new_string: 'beta' } },
          { tool: 'Bash', args: { command: `wc -c < ${file} && cat ${file}`, description: 'Show the file' } },
        ]
        let last = { code: 0 as number | null, stdout: '', stderr: '' }
        for (const [i, step] of steps.entries()) {
          const marker = `vertex-session-${id}-step${i}`
          gw.mock.steer(marker, { tool_name: step.tool, tool_arguments: step.args })
          last = await claudeVertex(gw, id, `Do step ${marker}.`, [...tools, ...(i === 0 ? [] : ['--continue'])], home)
          gw.mock.steer(marker, undefined)
          expect(last.code, output(last)).toBe(0)
        }
        // The file went through the tools: written, then edited.
        expect(readFileSync(file, 'utf8')).toBe(`beta ${id}\n`)
        // The command ran over the edited file, and its output went back to the model and out.
        expect(last.stdout).toContain(`beta ${id}`)
        const sent = gw.mock.requests.slice(before).filter((request) => request.method === 'POST')
        expect(sent.some((request) => request.body.includes(`${`beta ${id}\n`.length}`) && request.body.includes(`beta ${id}`))).toBe(true)
        // Thinking was asked for, in the client's terms: the Anthropic upstream got Claude Code's `thinking`.
        if (id === 'claude-sonnet-4-5') expect(sent.some((request) => request.body.includes('"thinking":{'))).toBe(true)
        expect(gw.refusals.slice(since)).toEqual([])
      })
    })
  },
)
