#!/usr/bin/env node
// Checks the house rules a linter does not: no source file over 400 lines, no code outside src/dialects/ that
// compares wire-format names (the dialect registry maps a configured `type` once; the names are the registry's), and a src/client/ that browsers
// and edge runtimes can load: no `node:` import and nothing from outside src/client/. Import cycles are Biome's.
// src/testing/ (the mock upstream, model-gateway/testing) may name the formats too: it is per-format code itself,
// one fake upstream per wire format, and never reads a configured `type`.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))
const MAX_LINES = 400

/**
 * The dialect names: the `DialectName` of src/dialects/names.ts as TypeScript's checker resolves it (it is made of
 * what each dialect folder declares in its `types.ts`).
 */
function dialectNames() {
  const file = path.join(root, 'src', 'dialects', 'names.ts')
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  })
  const checker = program.getTypeChecker()
  const names = []
  const source = program.getSourceFile(file)
  source?.forEachChild((node) => {
    if (!ts.isTypeAliasDeclaration(node) || node.name.text !== 'DialectName') return
    const type = checker.getTypeAtLocation(node)
    for (const member of type.isUnion() ? type.types : [type]) if (member.isStringLiteral()) names.push(member.value)
  })
  if (names.length === 0) throw new Error('src/dialects/names.ts: no DialectName union of string literals found')
  return names
}
const DIALECT_LITERAL = new RegExp(`(['"\`])(${dialectNames().join('|')})\\1`)
const CLIENT_DIR = `src${path.sep}client${path.sep}`
/** The directories whose code may name the wire formats: the dialects, and the mock upstream's fakes of them. */
const FORMAT_DIRS = [`src${path.sep}dialects${path.sep}`, `src${path.sep}testing${path.sep}`]

/** What is wrong with `file`'s imports, if it is part of the client: it must run where there is no Node. */
function clientImportProblems(file, text) {
  const found = []
  // TypeScript's own scanner: imports, re-exports, `import()` and `require`, never a word in a comment or a string.
  for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
    const inside = specifier.startsWith('./') && !path.relative(CLIENT_DIR, path.join(path.dirname(file), specifier)).startsWith('..')
    if (!inside)
      found.push(`${file}: imports '${specifier}' (src/client/ may import only its own files: no node:, no package, nothing outside it)`)
  }
  return found
}

function* sources(dir) {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(rel)
    else if (/\.(ts|mts|mjs)$/.test(entry.name)) yield rel
  }
}

const problems = []
for (const file of [...sources('src'), ...sources('adapters')]) {
  const text = readFileSync(path.join(root, file), 'utf8')
  const lines = text.split('\n')
  if (file.startsWith(CLIENT_DIR)) problems.push(...clientImportProblems(file, text))
  if (lines.length > MAX_LINES) problems.push(`${file}: ${lines.length} lines (at most ${MAX_LINES}; split it by concern)`)
  if (FORMAT_DIRS.some((dir) => file.startsWith(dir))) continue
  lines.forEach((line, i) => {
    const code = /^\s*(\/\/|\/\*|\*)/.test(line) ? '' : line.replace(/\/\/.*$/, '')
    if (DIALECT_LITERAL.test(code)) problems.push(`${file}:${i + 1}: a dialect name outside src/dialects/ and src/testing/: ${line.trim()}`)
  })
}
if (problems.length > 0) {
  console.error(problems.join('\n'))
  process.exit(1)
}
console.log('structure: ok')
