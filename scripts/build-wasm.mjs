#!/usr/bin/env node
// Assembles the project's WebAssembly (src/json/inspect.wat) into the TypeScript module that carries its bytes
// (src/json/inspect-wasm-bytes.ts), so that the package needs no assembler and no file beside its code at run time.
// `--check` writes nothing and fails when the module is not what the text assembles to; the unit tests check too.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import wabtInit from 'wabt'

const root = new URL('..', import.meta.url)
/** Each text module and the TypeScript module generated from it. */
export const WASM_MODULES = [{ source: 'src/json/inspect.wat', output: 'src/json/inspect-wasm-bytes.ts', name: 'INSPECT_WASM' }]

/** The generated TypeScript of one module: its bytes in base64, one constant. */
export async function generated({ source, name }) {
  const wabt = await wabtInit()
  const text = readFileSync(fileURLToPath(new URL(source, root)), 'utf8')
  const parsed = wabt.parseWat(source, text, { simd: true })
  try {
    parsed.validate()
    const { buffer } = parsed.toBinary({ write_debug_names: false })
    const base64 = Buffer.from(buffer).toString('base64')
    const lines = base64.match(/.{1,100}/g) ?? []
    return [
      `// Generated from ${source.split('/').pop()} by scripts/build-wasm.mjs: do not edit; change the text and run it again.`,
      '',
      `/** The WebAssembly module of ${source.split('/').pop()}, ${buffer.length} bytes in base64. */`,
      `export const ${name} =`,
      ...lines.map((line, i) => `  '${line}'${i === lines.length - 1 ? '' : ' +'}`),
      '',
    ].join('\n')
  } finally {
    parsed.destroy()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check')
  let stale = 0
  for (const module of WASM_MODULES) {
    const file = fileURLToPath(new URL(module.output, root))
    const next = await generated(module)
    let current = ''
    try {
      current = readFileSync(file, 'utf8')
    } catch {}
    if (current === next) continue
    if (check) {
      stale++
      console.error(`${module.output} is not what ${module.source} assembles to: run node scripts/build-wasm.mjs`)
    } else {
      writeFileSync(file, next)
      console.log(`wrote ${module.output}`)
    }
  }
  process.exitCode = stale > 0 ? 1 : 0
}
