// README.md and docs/ stay readable and whole: the README short, every relative link pointing at a file (and heading)
// that exists, and code blocks in ASCII so a copied key or header never carries a character no HTTP header can hold.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { anchors, codeBlocks, docFiles, links, prose, readDoc, root } from './markdown.js'

// The examples' guide is read beside the source, not shipped, but its links must hold all the same.
const files = [...docFiles(), 'examples/README.md']

describe('README.md', () => {
  const text = readDoc('README.md')

  it('is at most 300 lines', () => {
    expect(text.split('\n').length).toBeLessThanOrEqual(300)
  })

  it('has no prose line (tables included) over 160 characters', () => {
    const long = prose(text)
      .map((line, index) => ({ line: index + 1, length: line.length }))
      .filter((l) => l.length > 160)
    expect(long).toEqual([])
  })

  it('links only into what the package ships: docs/ and LICENSE', () => {
    const outside = links(text)
      .map((l) => l.target)
      .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
      .filter((target) => !target.startsWith('docs/') && target !== 'LICENSE')
    expect(outside).toEqual([])
  })
})

describe.each(files)('%s', (file) => {
  const text = readDoc(file)

  it('has only relative links that resolve to a file, and to a heading of it when they name one', () => {
    const broken: string[] = []
    for (const { target, line } of links(text)) {
      if (/^[a-z]+:/i.test(target)) continue
      const [pathPart = '', anchor] = target.split('#')
      const resolved = pathPart === '' ? path.join(root, file) : path.join(root, path.dirname(file), decodeURIComponent(pathPart))
      const inPackage = ['docs/', 'README.md', 'LICENSE'].some((shipped) => path.relative(root, resolved).startsWith(shipped))
      // The contributors' pages may point into the repository; every other page ships in the package, alone.
      if (!inPackage && !file.startsWith('docs/contributing/') && !file.startsWith('examples/'))
        broken.push(`${file}:${line} ${target}: outside the package`)
      if (!existsSync(resolved)) {
        broken.push(`${file}:${line} ${target}: no such file`)
        continue
      }
      if (anchor && resolved.endsWith('.md') && !anchors(readDoc(path.relative(root, resolved))).has(anchor))
        broken.push(`${file}:${line} ${target}: no such heading`)
    }
    expect(broken).toEqual([])
  })

  it('has only ASCII inside code blocks (a pasted `sk-…` breaks every SDK header)', () => {
    const found: string[] = []
    for (const block of codeBlocks(file, text)) {
      block.code.split('\n').forEach((line, index) => {
        const bad = /[^\t\n\r -~]/.exec(line)
        if (bad) found.push(`${file}:${block.line + 1 + index} U+${bad[0].codePointAt(0)?.toString(16).toUpperCase()}: ${line.trim()}`)
      })
    }
    expect(found).toEqual([])
  })
})
