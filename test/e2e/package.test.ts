import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import vm from 'node:vm'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codeBlocks, section } from '../docs/markdown.js'
import { chatBody } from '../support/bodies.js'
import { call } from '../support/http.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))
const ENTRIES = [
  'model-gateway',
  'model-gateway/node',
  'model-gateway/express',
  'model-gateway/koa',
  'model-gateway/otel',
  'model-gateway/client',
  'model-gateway/testing',
]

let tmp: string
/** A copy of the package as published (package.json, fresh dist) plus the examples, outside the repo. */
let pkgDir: string
let tarball: string

/** Runs ESM code in a child node process in the package directory, where it imports itself by name; returns its JSON output. */
async function child(code: string, flags: string[] = []): Promise<any> {
  const { stdout } = await run(process.execPath, [...flags, '--input-type=module', '--eval', code], { cwd: pkgDir })
  return JSON.parse(stdout)
}

/** Each entry's exports as `{ name: typeof value }`, loaded through `import` or through `require`. */
const exportsCode = (how: 'import' | 'require') => `
  import { createRequire } from 'node:module'
  const require = createRequire(process.cwd() + '/noop.cjs')
  const out = {}
  for (const spec of ${JSON.stringify(ENTRIES)}) {
    const mod = ${how === 'import' ? 'await import(spec)' : 'require(spec)'}
    const file = ${how === 'import' ? 'import.meta.resolve(spec)' : "'file://' + require.resolve(spec)"}
    out[spec] = { file, exports: Object.fromEntries(Object.entries(mod).map(([k, v]) => [k, typeof v])) }
  }
  console.log(JSON.stringify(out))
`

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'model-gateway-package-'))
  pkgDir = path.join(tmp, 'model-gateway')
  // One build per run, by the test itself, so it never checks stale output; built outside the repo's dist,
  // which other tools may be reading meanwhile.
  await run('npm', ['run', 'build', '--', '--out-dir', path.join(pkgDir, 'dist')], { cwd: root })
  await cp(path.join(root, 'package.json'), path.join(pkgDir, 'package.json'))
  await cp(path.join(root, 'README.md'), path.join(pkgDir, 'README.md'))
  // The examples import the package by name, the mock upstream from `model-gateway/testing` included.
  for (const part of ['examples/mock-upstream.mjs', 'examples/node-server.mjs', 'examples/express', 'examples/koa', 'examples/testing']) {
    await cp(path.join(root, part), path.join(pkgDir, part), { recursive: true })
  }
  // Dependencies (and the frameworks the examples use) as installed for the repo.
  await symlink(path.join(root, 'node_modules'), path.join(pkgDir, 'node_modules'), 'dir')
  // --ignore-scripts: `prepare` would build a second time.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: pkgDir })
  tarball = path.join(tmp, JSON.parse(stdout)[0].filename)
}, 180_000)

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true })
})

describe('the built package', () => {
  const expected = {
    'model-gateway': {
      createGateway: 'function',
      GatewayError: 'function',
      isGatewayError: 'function',
      requestBodyHash: 'function',
      ownerId: 'function',
      OMITTED_TOO_LARGE: 'string',
      gatewayChannels: 'object',
    },
    'model-gateway/node': { nodeHandler: 'function', upgradeHandler: 'function' },
    'model-gateway/express': { expressMiddleware: 'function' },
    'model-gateway/koa': { koaMiddleware: 'function' },
    'model-gateway/otel': { instrumentGateway: 'function' },
    'model-gateway/client': {
      createRecoveringFetch: 'function',
      RecoveringFetchError: 'function',
      findRecoveringFetchError: 'function',
      createRecoveriesClient: 'function',
      RecoveriesError: 'function',
    },
    'model-gateway/testing': { MOCK_AWS_CREDENTIALS: 'object', startMockUpstream: 'function' },
  }

  it('imports every entry through the exports map as ESM', async () => {
    const out = await child(exportsCode('import'))
    for (const spec of ENTRIES) {
      expect(out[spec].exports, spec).toEqual(expected[spec as keyof typeof expected])
      expect(out[spec].file, spec).toMatch(new RegExp(`^${pathToFileURL(pkgDir).href}/dist/[a-z]+\\.js$`))
    }
  })

  it('requires every entry through the exports map as CJS', async () => {
    const out = await child(exportsCode('require'))
    for (const spec of ENTRIES) {
      expect(out[spec].exports, spec).toEqual(expected[spec as keyof typeof expected])
      expect(out[spec].file, spec).toMatch(new RegExp(`^${pathToFileURL(pkgDir).href}/dist/[a-z]+\\.cjs$`))
    }
  })

  it('isGatewayError recognises errors of the ESM copy and of the CJS copy alike', async () => {
    const out = await child(`
      import { createRequire } from 'node:module'
      const esm = await import('model-gateway')
      const cjs = createRequire(process.cwd() + '/noop.cjs')('model-gateway')
      let thrown
      try { cjs.createGateway({}) } catch (error) { thrown = error }
      console.log(JSON.stringify({
        twoCopies: esm.GatewayError !== cjs.GatewayError,
        code: thrown?.code,
        esmSeesCjs: esm.isGatewayError(thrown),
        cjsSeesEsm: cjs.isGatewayError(new esm.GatewayError('not_found', 'x')),
        lookalikes: [esm.isGatewayError(new Error('x')), cjs.isGatewayError({ code: 'not_found' }), esm.isGatewayError(null)],
      }))
    `)
    expect(out).toEqual({ twoCopies: true, code: 'invalid_options', esmSeesCjs: true, cjsSeesEsm: true, lookalikes: [false, false, false] })
  })

  it('the root and node entries load without express, koa, @opentelemetry/api or the AWS credential chain, as ESM and as CJS', async () => {
    // Resolving express, koa, @koa/*, @opentelemetry/* or @aws-sdk/* throws in the child, for `import` (a resolve hook) and `require` alike.
    const blocked = String.raw`/^(express|koa)(\/|$)|^@koa\/|^@opentelemetry\/|^@aws-sdk\//`
    await writeFile(
      path.join(tmp, 'hooks.mjs'),
      `export async function resolve(s, c, next) { if (${blocked}.test(s)) throw new Error('blocked: ' + s); return next(s, c) }\n`,
    )
    await writeFile(path.join(tmp, 'register.mjs'), `import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n`)
    await writeFile(
      path.join(tmp, 'block.cjs'),
      `const Module = require('node:module')\nconst resolve = Module._resolveFilename\n` +
        `Module._resolveFilename = function (request, ...rest) { if (${blocked}.test(request)) throw new Error('blocked: ' + request); return resolve.call(this, request, ...rest) }\n`,
    )
    const flags = ['--require', path.join(tmp, 'block.cjs'), '--import', path.join(tmp, 'register.mjs')]
    const requireHere = `createRequire(process.cwd() + '/noop.cjs')`

    // The blocker works: loading a framework directly fails, either way.
    const check = await child(
      `import { createRequire } from 'node:module'
       const results = {}
       try { await import('express'); results.import = 'loaded' } catch (e) { results.import = e.message }
       try { ${requireHere}('koa'); results.require = 'loaded' } catch (e) { results.require = e.message }
       try { await import('@opentelemetry/api'); results.otel = 'loaded' } catch (e) { results.otel = e.message }
       console.log(JSON.stringify(results))`,
      flags,
    )
    expect(check).toEqual({
      import: expect.stringContaining('blocked: express'),
      require: expect.stringContaining('blocked: koa'),
      otel: expect.stringContaining('blocked: @opentelemetry/api'),
    })

    const out = await child(
      `import { createRequire } from 'node:module'
       const require = ${requireHere}
       const esm = [await import('model-gateway'), await import('model-gateway/node')]
       const cjs = [require('model-gateway'), require('model-gateway/node')]
       const gateway = esm[0].createGateway({ upstreams: { u: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } }, models: [{ id: 'm', upstream: 'u' }], auth: { apiKeys: ['k'] } })
       await gateway.close()
       const frameworks = Object.keys(require.cache).filter((f) => /[\\\\/]node_modules[\\\\/](express|koa|@koa|@opentelemetry)[\\\\/]/.test(f))
       console.log(JSON.stringify({ esm: esm.map((m) => Object.keys(m).length > 0), cjs: cjs.map((m) => Object.keys(m).length > 0), frameworks }))`,
      flags,
    )
    expect(out).toEqual({ esm: [true, true], cjs: [true, true], frameworks: [] })

    // A Bedrock upstream on the default chain without the optional peer installed: its first call is a 502, and the
    // operator's log line names the package to install; the process goes on.
    const missing = await child(
      `import { createGateway } from 'model-gateway'
       import { nodeHandler } from 'model-gateway/node'
       import { startMockUpstream } from 'model-gateway/testing'
       import http from 'node:http'
       const mock = await startMockUpstream()
       const lines = []
       const logger = { warn: (...l) => lines.push(l), error: (...l) => lines.push(l) }
       const gateway = createGateway({ upstreams: { aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1' } }, models: [{ id: 'c', upstream: 'aws', upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0' }], auth: { apiKeys: ['k'] }, logger })
       const server = http.createServer(nodeHandler(gateway)).listen(0, '127.0.0.1')
       await new Promise((r) => server.once('listening', r))
       const res = await fetch('http://127.0.0.1:' + server.address().port + '/v1/messages', { method: 'POST', headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }) })
       const status = res.status
       await res.text()
       server.close(); await gateway.close(); await mock.close()
       console.log(JSON.stringify({ status, log: JSON.stringify(lines) }))`,
      flags,
    )
    expect(missing.status).toBe(502)
    expect(missing.log).toContain('MISSING_PEER @aws-sdk/credential-providers')
  })

  it('the client entry is self-contained: no import or require in either build, so browsers and edge runtimes load it', async () => {
    for (const file of ['client.js', 'client.cjs']) {
      const code = await readFile(path.join(pkgDir, 'dist', file), 'utf8')
      expect(code, file).not.toMatch(/\bimport\s*[\s{*'"(]|\brequire\s*\(/)
    }
  })

  it('the client entry runs with web globals only: the CJS build evaluated where there is no process, Buffer or require', async () => {
    const code = await readFile(path.join(pkgDir, 'dist', 'client.cjs'), 'utf8')
    const seen: string[] = []
    const answers: Record<string, unknown> = {
      'POST /ai/v1/recoveries/lookup': {
        items: [{ request_id: 'R1', created_at: 1, interrupted_reason: 'context canceled', request_body_hash: 'h' }],
      },
      'GET /ai/v1/recoveries/R1': { request_id: 'R1', response: { body_raw: '{"object":"chat.completion"}' } },
    }
    const fakeFetch = async (input: string, init: RequestInit) => {
      const url = new URL(input)
      seen.push(`${init.method} ${url.pathname} ${new Headers(init.headers).get('authorization')}`)
      return new Response(JSON.stringify(answers[`${init.method} ${url.pathname}`] ?? {}), { status: 200 })
    }
    // What a browser or an edge runtime has; nothing of Node's.
    const web = { URL, URLSearchParams, Headers, Request, Response, AbortController, AbortSignal, ReadableStream, TextEncoder, TextDecoder }
    const context = vm.createContext({
      ...web,
      crypto: globalThis.crypto,
      setTimeout,
      clearTimeout,
      fetch: fakeFetch,
      module: { exports: {} },
    })
    vm.runInContext(`(function (module, exports) {\n${code}\n})(module, module.exports); globalThis.entry = module.exports`, context)
    const entry = (context as { entry: Record<string, any> }).entry
    expect(vm.runInContext('[typeof process, typeof Buffer, typeof require]', context)).toEqual(['undefined', 'undefined', 'undefined'])
    const recoveries = entry.createRecoveriesClient({ baseUrl: 'https://ai.example.com/ai/v1', apiKey: 'sk-web' })
    const kept = await recoveries.recover({ model: 'm', messages: [] })
    expect(kept).toMatchObject({ requestId: 'R1', answer: { object: 'chat.completion' } })
    expect(seen).toEqual(['POST /ai/v1/recoveries/lookup Bearer sk-web', 'GET /ai/v1/recoveries/R1 Bearer sk-web'])
    expect(typeof entry.createRecoveringFetch({ baseUrls: ['https://ai.example.com'] })).toBe('function')
  })

  it('publint finds no errors, warnings counted as errors', async () => {
    const file = await readFile(tarball)
    const { messages, pkg } = await publint({
      pack: { tarball: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) },
      strict: true,
    })
    const errors = messages.filter((m) => m.type === 'error').map((m) => formatMessage(m, pkg))
    expect(errors).toEqual([])
  })

  it('are-the-types-wrong finds no problem in any resolution mode, for every entry', async () => {
    const bin = path.join(root, 'node_modules', '.bin', 'attw')
    const { stdout } = await run(bin, [tarball, '--format', 'json'], { cwd: tmp }).catch((error: { stdout: string }) => ({
      stdout: error.stdout,
    }))
    const result = JSON.parse(stdout)
    expect(Object.keys(result.analysis.entrypoints).sort()).toEqual([
      '.',
      './client',
      './express',
      './koa',
      './node',
      './otel',
      './package.json',
      './testing',
    ])
    expect(result.problems).toEqual({})
  })
})

describe('the example apps', () => {
  const children: ChildProcess[] = []
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  })

  /** Starts an example on a free port and resolves with its base URL, read from what it prints. */
  function start(script: string): Promise<{ base: string; proc: ChildProcess }> {
    const proc = spawn(process.execPath, [script], {
      cwd: pkgDir,
      env: { ...process.env, PORT: '0', MOCK_PORT: '0', MOCK_DELAY_MS: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    children.push(proc)
    return new Promise((resolve, reject) => {
      let out = ''
      proc.stdout!.on('data', (chunk: Buffer) => {
        out += chunk
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
        if (match) resolve({ base: match[1]!, proc })
      })
      proc.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)))
    })
  }

  for (const name of ['express', 'koa']) {
    it(`npm run example:${name} serves its own routes and the gateway under /ai, and shuts down cleanly`, async () => {
      const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))
      const script = pkg.scripts[`example:${name}`].replace(/^node /, '')
      const { base, proc } = await start(script)
      expect((await call(`${base}/api/me`)).status).toBe(401)
      expect((await call(`${base}/api/me`, { headers: { 'x-session': 'demo-session' } })).json).toEqual({ user: 'demo' })
      expect((await call(`${base}/ai/v1/models`)).json.object).toBe('list')
      const chat = await call(`${base}/ai/v1/chat/completions`, {
        headers: { authorization: 'Bearer sk-demo-key' },
        body: chatBody('from the example'),
      })
      expect(chat.status).toBe(200)
      expect(chat.json.choices[0].message.content).toContain('from the example')
      const unknown = await call(`${base}/ai/v1/nothing-here`)
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual({ error: 'no route for GET /ai/v1/nothing-here' })
      const exited = new Promise((resolve) => proc.once('exit', resolve))
      proc.kill('SIGTERM')
      expect(await exited).toBe(0)
    })
  }

  it('npm start serves every curl command of the README quick start, each answered 200', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))
    const { base, proc } = await start(pkg.scripts.start.replace(/^node /, ''))
    const quickStart = section(await readFile(path.join(root, 'README.md'), 'utf8'), 'Quick start')
    const commands = codeBlocks('README.md', quickStart)
      .filter((block) => block.info === 'sh')
      .flatMap((block) => block.code.replace(/\\\n\s*/g, '').split('\n'))
      .filter((line) => line.startsWith('curl '))
    expect(commands.length).toBeGreaterThanOrEqual(5)
    for (const command of commands) {
      const local = command.replaceAll('http://127.0.0.1:8080', base)
      const { stdout } = await run('sh', ['-c', `${local} --max-time 20 -o /dev/null -w '%{http_code}'`])
      expect(`${stdout} ${command}`).toBe(`200 ${command}`)
    }
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGTERM')
    expect(await exited).toBe(0)
  })

  it('the offline test of an Express app (examples/testing, the testing guide) passes against the packed package', async () => {
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap', 'examples/testing/app.test.mjs'], { cwd: pkgDir })
    expect(stdout).toMatch(/^# pass 3$/m)
    expect(stdout).toMatch(/^# fail 0$/m)
  })

  it('node examples/mock-upstream.mjs runs the mock of model-gateway/testing on MOCK_PORT, and stops on SIGTERM', async () => {
    const { base, proc } = await start('examples/mock-upstream.mjs')
    const res = await call(`${base}/v1/chat/completions`, { body: chatBody('script') })
    expect(res.status).toBe(200)
    expect(res.json.choices[0].message.content).toBe('Echo: script')
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
