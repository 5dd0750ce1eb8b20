// Every TypeScript and JavaScript block of README.md and docs/ compiles against the package's own sources: the blocks
// are written to a folder inside the repository (ignored by git), `model-gateway` and its entries are mapped to the
// sources, and one `tsc --noEmit` checks them all. A block that is a fragment on purpose says so: ```ts fragment.
import { execFile } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { type CodeBlock, codeBlocks, docFiles, readDoc, root } from './markdown.js'

const run = promisify(execFile)
const dir = path.join(root, '.docs-check')

/** Where each entry point of the package lives in the sources. */
const ENTRIES: Record<string, string> = {
  'model-gateway': 'src/index.ts',
  'model-gateway/node': 'adapters/node.ts',
  'model-gateway/express': 'adapters/express.ts',
  'model-gateway/koa': 'adapters/koa.ts',
  'model-gateway/otel': 'src/otel/index.ts',
  'model-gateway/client': 'src/client/index.ts',
  'model-gateway/testing': 'src/testing/index.ts',
}

/**
 * What the blocks may use without declaring it: the gateway and its options, which most blocks take as made by the
 * one before. Everything else a block uses it imports, as a reader's file would.
 */
const PRELUDE = `
declare const gateway: import('model-gateway').Gateway
declare const options: import('model-gateway').GatewayOptions
declare const upstreams: import('model-gateway').GatewayOptions['upstreams']
declare const models: import('model-gateway').GatewayOptions['models']
declare const auth: import('model-gateway').GatewayOptions['auth']
`

const TS = new Set(['ts', 'typescript'])
const JS = new Set(['js', 'javascript'])

/** The blocks to check: every ts and js block not marked `fragment`. */
function checkedBlocks(): CodeBlock[] {
  return docFiles()
    .flatMap((file) => codeBlocks(file, readDoc(file)))
    .filter((block) => {
      const [lang, ...flags] = block.info.split(/\s+/)
      return (
        (TS.has(lang ?? '') || JS.has(lang ?? '')) &&
        !flags.includes('fragment') &&
        !(block.file === 'docs/guides/testing.md' && JS.has(lang ?? ''))
      )
    })
}

/** The file name a block is written to: its document and line, readable in tsc's messages. */
function fileFor(block: CodeBlock): string {
  const ext = TS.has(block.info.split(/\s+/)[0] ?? '') ? 'mts' : 'mjs'
  return `${block.file.replace(/[/.]/g, '_')}_L${block.line}.${ext}`
}

describe('code blocks of README.md and docs/', () => {
  it('there are blocks to check, and fragments stay rare', () => {
    const all = docFiles().flatMap((file) => codeBlocks(file, readDoc(file)))
    expect(checkedBlocks().length).toBeGreaterThan(15)
    expect(all.filter((b) => b.info.includes('fragment')).length).toBeLessThanOrEqual(3)
  })

  it('every ts and js block type-checks against the sources (one tsc program)', async () => {
    await rm(dir, { recursive: true, force: true })
    await mkdir(dir, { recursive: true })
    const blocks = checkedBlocks()
    const byFile = new Map<string, CodeBlock>()
    for (const block of blocks) {
      const name = fileFor(block)
      byFile.set(name, block)
      // `export {}` makes every block a module of its own, so two blocks may both declare `const gateway`.
      await writeFile(path.join(dir, name), `${block.code}\nexport {}\n`)
    }
    await writeFile(path.join(dir, 'prelude.d.ts'), PRELUDE)
    const paths = Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, [path.join(root, file)]]))
    const base = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: true, noEmit: true }
    // TypeScript blocks strictly; JavaScript blocks checked too, as an editor checks a .mjs file (types inferred, no
    // annotations demanded). The testing guide's JavaScript blocks are the files of examples/testing/, which the
    // package test runs (test/e2e/package.test.ts).
    const configs = {
      'tsconfig.json': {
        compilerOptions: { ...base, strict: true, esModuleInterop: true, types: ['node'], paths },
        include: ['*.mts', 'prelude.d.ts'],
      },
      'tsconfig.js.json': {
        compilerOptions: {
          ...base,
          allowJs: true,
          checkJs: true,
          strict: true,
          noImplicitAny: false,
          esModuleInterop: true,
          types: ['node'],
          paths,
        },
        include: ['*.mjs', 'prelude.d.ts'],
      },
    }
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    const outputs = await Promise.all(
      // The JavaScript program only when there are JavaScript blocks: each program type-checks the sources again.
      Object.entries(configs)
        .filter(([name]) => name === 'tsconfig.json' || [...byFile.keys()].some((file) => file.endsWith('.mjs')))
        .map(async ([name, config]) => {
          await writeFile(path.join(dir, name), JSON.stringify(config, null, 2))
          return run(process.execPath, [tsc, '-p', path.join(dir, name)], { cwd: root }).then(
            () => '',
            (error: { stdout?: string }) => error.stdout ?? String(error),
          )
        }),
    )
    const result = outputs.join('\n')
    // Each message pointed back at the document and line it comes from.
    const problems = result
      .split('\n')
      .filter((line) => line.includes('error TS'))
      .map((line) => {
        const match = /([^/\\]+)\((\d+),\d+\): (.*)$/.exec(line)
        const block = match ? byFile.get(match[1] ?? '') : undefined
        return block && match ? `${block.file}:${block.line + Number(match[2])}: ${match[3]}` : line
      })
    expect(problems, result).toEqual([])
  }, 180_000)
})

describe('docs/guides/testing.md', () => {
  it('shows the example app and its test exactly as examples/testing/ has them (the package test runs those)', () => {
    const blocks = codeBlocks('docs/guides/testing.md', readDoc('docs/guides/testing.md')).map((b) => b.code.trim())
    expect(blocks).toContain(readDoc('examples/testing/app.mjs').trim())
    expect(blocks).toContain(readDoc('examples/testing/app.test.mjs').trim())
  })
})
