// Reading the project's Markdown the way a reader's renderer does: fenced code blocks, headings and their anchors,
// links. Shared by the tests that keep README.md and docs/ true to the code.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root directory. */
export const root = fileURLToPath(new URL('../..', import.meta.url))

/** README.md and every Markdown file under docs/, as paths relative to the root. */
export function docFiles(): string[] {
  const found = ['README.md']
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.md')) found.push(rel)
    }
  }
  walk('docs')
  return found
}

/** The text of a file under the root. */
export function readDoc(rel: string): string {
  return readFileSync(path.join(root, rel), 'utf8')
}

/** A fenced code block: its info string (`ts`, `ts fragment`, `sh`), its text and the line its fence opens on (1-based). */
export interface CodeBlock {
  file: string
  info: string
  code: string
  line: number
}

/** Every fenced code block of a Markdown text. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  const lines = text.split('\n')
  let open: { info: string; line: number; body: string[]; fence: string } | undefined
  lines.forEach((line, index) => {
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(line)
    if (open) {
      if (fence?.[2]?.startsWith(open.fence) && fence[3]?.trim() === '') {
        blocks.push({ file, info: open.info, code: open.body.join('\n'), line: open.line })
        open = undefined
      } else open.body.push(line)
    } else if (fence) open = { info: (fence[3] ?? '').trim(), line: index + 1, body: [], fence: fence[2] ?? '```' }
  })
  return blocks
}

/** The text outside fenced code blocks, line for line (code lines blanked), so headings and links are not read from code. */
export function prose(text: string): string[] {
  let inside = false
  return text.split('\n').map((line) => {
    if (/^\s*(`{3,}|~{3,})/.test(line)) {
      inside = !inside
      return ''
    }
    return inside ? '' : line
  })
}

/** The anchor a heading gets on GitHub: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (!heading) continue
    const slug = (heading[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/<[^>]+>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    found.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return found
}

/** Every inline link target `[text](target)` outside code blocks and code spans, with its line (1-based). */
export function links(text: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = []
  prose(text).forEach((line, index) => {
    const withoutSpans = line.replace(/`[^`]*`/g, '``')
    for (const match of withoutSpans.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ target: match[1] ?? '', line: index + 1 })
  })
  return found
}

/** The lines of a Markdown section: from the heading whose text is `title` to the next heading of its level or above. */
export function section(text: string, title: string): string {
  const lines = text.split('\n')
  const proseLines = prose(text)
  const start = proseLines.findIndex((line) => /^#{1,6}\s/.test(line) && line.replace(/^#+\s+/, '').trim() === title)
  if (start < 0) return ''
  const level = /^#+/.exec(proseLines[start] ?? '')?.[0].length ?? 1
  let end = lines.length
  for (let i = start + 1; i < lines.length; i++) {
    const heading = /^(#+)\s/.exec(proseLines[i] ?? '')
    if (heading && (heading[1]?.length ?? 7) <= level) {
      end = i
      break
    }
  }
  return lines.slice(start, end).join('\n')
}
