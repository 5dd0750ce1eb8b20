#!/usr/bin/env node
// Summarises .cpuprofile files written by `node bench/run.mjs --profile`: the functions with the most
// self time, and the project functions with the most total time (self + callees), with file:line.
//
//   node bench/profile-top.mjs bench/profiles/CPU.*.cpuprofile [--top 25] [--match dist/]
import { readFileSync } from 'node:fs'

const args = process.argv.slice(2)
const files = []
let top = 25
let match = '/dist/'
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i])
  else if (args[i] === '--match') match = String(args[++i])
  else files.push(args[i])
}
if (files.length === 0) {
  console.error('usage: node bench/profile-top.mjs <file.cpuprofile>... [--top N] [--match substring]')
  process.exit(1)
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  // Sample counts per node, weighted by the time delta that follows each sample.
  const selfUs = new Map()
  const deltas = profile.timeDeltas ?? []
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0))
  })
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const name = (node) => {
    const f = node.callFrame
    const url = f.url ? f.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|dist|bench|src|examples)\//, '$1/') : ''
    return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim()
  }
  const self = new Map()
  const inclusive = new Map()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    self.set(name(node), (self.get(name(node)) ?? 0) + us)
    // Walk up once per distinct function, so recursion is not counted twice.
    const seen = new Set()
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const label = name(byId.get(at))
      if (seen.has(label)) continue
      seen.add(label)
      inclusive.set(label, (inclusive.get(label) ?? 0) + us)
    }
  }
  const pct = (us) => `${((us / totalUs) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms`
  console.log(`\n${file}: ${(totalUs / 1000).toFixed(0)} ms sampled`)
  console.log('  self time:')
  for (const [label, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(us)}  ${label}`)
  console.log(`  total time of functions matching '${match}':`)
  for (const [label, us] of [...inclusive]
    .filter(([label]) => label.includes(match.replace(/^\//, '')))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(`    ${pct(us)}  ${label}`)
  }
}
