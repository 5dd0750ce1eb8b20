import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_BINARIES, type AgentGateway, CLIENT_KEY, installAgents, runAgent, scratchHome, startAgentGateway } from './support.js'

const notInstalled = await installAgents('claude')

/** The model ids Claude Code is run with in Bedrock mode (a Bedrock-style id, `.` and `:` in it), and each one's upstream. */
const MODELS = [
  { id: 'claude-sonnet-4-5', upstream: 'anthropic', aliases: ['us.anthropic.claude-sonnet-4-5-20250929-v1:0'] },
  { id: 'claude-on-openai', upstream: 'openai', upstreamModel: 'gpt-4o-mini', aliases: ['us.openai.claude-on-openai-v1:0'] },
]

/**
 * Claude Code in Bedrock mode against the gateway: auth skipped, the caller's key as a bearer token in a custom
 * header, thinking on, nothing sent anywhere else. `continued` goes on with the session the home's last run left.
 */
function claude(gw: AgentGateway, model: string, prompt: string, options: { home?: string; extra?: readonly string[] } = {}) {
  const home = options.home ?? scratchHome()
  return runAgent(AGENT_BINARIES.claude, ['-p', '--model', model, ...(options.extra ?? []), '--', prompt], {
    HOME: home,
    CLAUDE_CODE_USE_BEDROCK: '1',
    ANTHROPIC_BEDROCK_BASE_URL: gw.url,
    CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1',
    AWS_REGION: 'us-east-1',
    ANTHROPIC_CUSTOM_HEADERS: `Authorization: Bearer ${CLIENT_KEY}`,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    MAX_THINKING_TOKENS: '2048',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  })
}

const output = (run: { stdout: string; stderr: string }) => `${run.stdout}\n${run.stderr}`.slice(-3000)

describe.skipIf(notInstalled !== undefined)(
  `Claude Code in Bedrock mode through the gateway${notInstalled ? `: skipped, ${notInstalled}` : ''}`,
  () => {
    let gw: AgentGateway
    beforeAll(async () => {
      gw = await startAgentGateway(MODELS)
    })
    afterAll(() => gw?.close())

    describe.each(MODELS)('on $aliases.0 (an $upstream upstream)', ({ id, aliases, upstream }) => {
      const model = aliases[0] as string

      it('answers a prompt over InvokeModelWithResponseStream, with no call refused', async () => {
        const marker = `bedrock-text-${id}`
        gw.mock.steer(marker, { content: `the gateway answered ${marker}` })
        const since = gw.refusals.length
        const run = await claude(gw, model, `Say the word ${marker}.`)
        expect(run.code, output(run)).toBe(0)
        expect(run.stdout).toContain(`the gateway answered ${marker}`)
        expect(
          gw.seen.some(
            (line) =>
              line.startsWith(`POST /model/${encodeURIComponent(model)}/invoke-with-response-stream`) ||
              line.startsWith(`POST /model/${model}/invoke-with-response-stream`),
          ),
        ).toBe(true)
        expect(gw.refusals.slice(since)).toEqual([])
      })

      it('runs a Bash tool round trip', async () => {
        const marker = `bedrock-tool-${id}`
        gw.mock.steer(marker, { tool_name: 'Bash', tool_arguments: { command: `echo $((6*7))-${marker}`, description: 'Print a marker' } })
        const before = gw.mock.requests.length
        const run = await claude(gw, model, `Run the shell command for ${marker}.`, { extra: ['--allowedTools', 'Bash'] })
        expect(run.code, output(run)).toBe(0)
        const calls = gw.mock.requests.slice(before).filter((request) => request.method === 'POST')
        expect(calls.some((request) => request.body.includes(`42-${marker}`))).toBe(true)
        expect(run.stdout).toContain(`42-${marker}`)
      })

      it('keeps a session over four tool calls: write a file, read it, edit it, run a command on it', async () => {
        const home = scratchHome()
        const file = path.join(home, `notes-${id}.txt`)
        const tools = ['--allowedTools', 'Write,Read,Edit,Bash']
        const steps = [
          { tool: 'Write', args: { file_path: file, content: `first line ${id}\n` } },
          { tool: 'Read', args: { file_path: file } },
          { tool: 'Edit', args: { file_path: file, old_string: `first line ${id}`, new_string: `edited line ${id}` } },
          { tool: 'Bash', args: { command: `wc -c < ${file} && cat ${file}`, description: 'Show the file' } },
        ]
        const before = gw.mock.requests.length
        let last = { code: 0 as number | null, stdout: '', stderr: '' }
        for (const [i, step] of steps.entries()) {
          const marker = `bedrock-session-${id}-step${i}`
          gw.mock.steer(marker, { tool_name: step.tool, tool_arguments: step.args })
          last = await claude(gw, model, `Do step ${marker}.`, { home, extra: [...tools, ...(i === 0 ? [] : ['--continue'])] })
          gw.mock.steer(marker, undefined)
          expect(last.code, output(last)).toBe(0)
        }
        expect(readFileSync(file, 'utf8')).toBe(`edited line ${id}\n`)
        // The command's output reached the model and came back out: the edited file's length and text.
        expect(last.stdout).toContain(`${`edited line ${id}\n`.length}`)
        expect(last.stdout).toContain(`edited line ${id}`)
        // Thinking was on: an Anthropic upstream got Claude Code's `thinking` as it sent it.
        if (upstream === 'anthropic') expect(gw.mock.requests.slice(before).some((r) => r.body.includes('"thinking":{'))).toBe(true)
      })
    })
  },
)
