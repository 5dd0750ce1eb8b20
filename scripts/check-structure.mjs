#!/usr/bin/env node
// Checks the house rules a linter does not: no source file over 400 lines, and no code outside src/dialects/ that
// compares wire-format names (the dialect registry maps a configured `type` once). Import cycles are Biome's.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const MAX_LINES = 400
const DIALECT_LITERAL = /(['"`])(openai|gemini)\1/

function* sources(dir) {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(rel)
    else if (/\.(ts|mts|mjs)$/.test(entry.name)) yield rel
  }
}

const problems = []
for (const file of [...sources('src'), ...sources('adapters')]) {
  const lines = readFileSync(path.join(root, file), 'utf8').split('\n')
  if (lines.length > MAX_LINES) problems.push(`${file}: ${lines.length} lines (at most ${MAX_LINES}; split it by concern)`)
  if (file.startsWith(`src${path.sep}dialects${path.sep}`)) continue
  lines.forEach((line, i) => {
    const code = /^\s*(\/\/|\/\*|\*)/.test(line) ? '' : line.replace(/\/\/.*$/, '')
    if (DIALECT_LITERAL.test(code)) problems.push(`${file}:${i + 1}: a dialect name outside src/dialects/: ${line.trim()}`)
  })
}
if (problems.length > 0) {
  console.error(problems.join('\n'))
  process.exit(1)
}
console.log('structure: ok')
