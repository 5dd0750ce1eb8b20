import { execFileSync, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Whether valgrind's callgrind can run here (it is on the machines CI runs on; the part says so when it is not). */
const hasCallgrind = (() => {
  try {
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.mjs', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

// Only that the harness runs end to end and prints its tables: timings on a shared CI machine mean nothing.
// The subset needs nothing beyond the root's dependencies, so it runs with or without bench/node_modules.
describe('benchmark harness (--quick)', () => {
  it('runs latency, throughput and hashing for the node adapter and the floor, and prints the tables', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'latency,throughput,hash,gw-node,floor-node'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('## model-gateway benchmarks')
    expect(stdout).toMatch(/- Machine: \d+ cores/)
    for (const heading of ['### 1. Added latency', '### 2. Saturated throughput', '### 4. Canonical hash', '### Targets']) {
      expect(stdout).toContain(heading)
    }
    for (const row of ['direct to the mock', 'floor: node:http + undici', 'model-gateway node', 'text-heavy', 'many small objects']) {
      const escaped = row.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      expect(stdout).toMatch(new RegExp(`^\\| ${escaped}[^|]*\\|`, 'm'))
    }
    expect(stdout).not.toMatch(/^Failed:/m)
  }, 180_000)

  it('runs the translation part: passthrough and translated calls and streams, chat, Responses and Messages, and prints their table', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'translate'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('### 12. Translation')
    expect(stdout).toMatch(/^\| passthrough \(gpt-4o-mini\) +\| \d/m)
    expect(stdout).toMatch(/^\| translated \(gemini-2\.5-flash\) +\| \d/m)
    // Another passthrough route, latency only.
    expect(stdout).toMatch(/^\| embeddings passthrough \(gpt-4o-mini, POST \/v1\/embeddings\) +\| -?\d/m)
    expect(stdout).toMatch(/^\| Responses passthrough \(gpt-4o-mini\) +\| \d/m)
    expect(stdout).toMatch(/^\| Responses translated \(gemini-2\.5-flash\) +\| \d/m)
    // An Azure upstream: a chat client's passthrough, a Gemini client's translated call.
    expect(stdout).toMatch(/^\| Gemini client on an Azure upstream \(gpt-azure, translated\) +\| -?\d/m)
    expect(stdout).toMatch(/^\| chat client on an Azure upstream \(gpt-azure, passthrough\) +\| -?\d/m)
    // The stream baseline of the same upstream route, untranslated.
    expect(stdout).toMatch(/^\| translated − Gemini client inter-frame p99 ms \(same upstream route\) +\| -?\d/m)
    // A Messages client on a model of each upstream format, and what reads Anthropic's passthrough against OpenAI's.
    expect(stdout).toMatch(/^\| Messages passthrough \(claude-sonnet-4-5\) +\| -?\d/m)
    expect(stdout).toMatch(/^\| Messages translated \(gpt-4o-mini, to chat completions\) +\| -?\d/m)
    expect(stdout).toMatch(/^\| Messages translated \(gemini-2\.5-flash, to generate-content\) +\| -?\d/m)
    expect(stdout).toMatch(/^\| Anthropic passthrough ÷ OpenAI passthrough req\/s +\| \d/m)
    expect(stdout).toMatch(/^\| Messages → Gemini stream inter-frame p99 ≤ passthrough of the same upstream route \+ 0\.1 ms +\| -?\d/m)
    expect(stdout).not.toMatch(/^Failed:/m)
  }, 180_000)

  it('runs the resumable-streams part: plain and resumable streams, held streams and a resume, and prints their table', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'streams'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('### 14. Resumable streams')
    expect(stdout).toMatch(/^\| plain \(cancel\) +\| \d/m)
    expect(stdout).toMatch(/^\| resumable \(finish: numbered, kept in memory\) +\| \d/m)
    expect(stdout).toMatch(/^\| cut → resumed stream open \(head\) ms +\| \d/m)
    expect(stdout).not.toMatch(/^Failed:/m)
  }, 180_000)

  it('runs the client part: plain and recovering fetch on a whole answer and a stream, cut streams resumed, and prints their tables', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'client'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('### 15. model-gateway/client: clean calls and cut streams')
    expect(stdout).toMatch(/^\| whole answer \(chat completion\) +\| \d/m)
    expect(stdout).toMatch(/^\| stream of 64 deltas, read to its end +\| \d/m)
    expect(stdout).toMatch(/^\| cut → first resumed event read by the app +\| \d/m)
    expect(stdout).toMatch(/^\| model-gateway\/client on a clean call \(whole answer\): p50 within the spread of plain fetch +\| -?\d/m)
    expect(stdout).not.toMatch(/^Failed:/m)
  }, 180_000)

  it('runs the background part: create-to-id and a whole background call against a plain one, and prints its table', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'background,gw-node'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('### 17. Background responses')
    expect(stdout).toMatch(/^\| plain \(whole answer\) +\| \d/m)
    expect(stdout).toMatch(/^\| background: create to id +\| \d[\d.]* +\| -?\d/m)
    expect(stdout).toMatch(/^\| background: create \+ stream to the end +\| \d[\d.]* +\| -?\d/m)
    expect(stdout).not.toMatch(/^Failed:/m)
  }, 180_000)

  it.runIf(hasCallgrind)(
    'counts instructions per request of the node adapter and the floor under callgrind, and prints their ratio',
    async () => {
      const { code, stdout, stderr } = await runBench(['--quick', '--only', 'instructions,gw-node,floor-node'])
      expect(code, stderr).toBe(0)
      expect(stdout).toContain('### 2b. Instructions per request (callgrind)')
      expect(stdout).toMatch(/^\| floor: node:http \+ undici +\| \d+ +\|/m)
      expect(stdout).toMatch(/^\| model-gateway node +\| \d+ +\|/m)
      expect(stdout).toMatch(/^\| node adapter ÷ floor +\| \d+\.\d\d× +\|/m)
      expect(stdout).not.toMatch(/^Failed:/m)
    },
    180_000,
  )
})
