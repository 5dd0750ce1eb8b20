import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))

/** The paths `npm pack` would put in the tarball, as it lists them (relative, with `/`). */
async function packedFiles(): Promise<string[]> {
  // --ignore-scripts: `prepare` would build; the list of what `files` ships does not need a build.
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root })
  return (JSON.parse(stdout)[0].files as Array<{ path: string }>).map((file) => file.path)
}

/** The targets of the Markdown links and images in `text` outside code, without their `#fragment`. */
function relativeLinks(text: string): string[] {
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '')
  const targets = [
    ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string),
    ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] as string),
  ]
  return targets
    .filter((target) => !/^[a-z][a-z\d+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => decodeURIComponent(target.replace(/#.*$/, '')))
}

describe('the packed package', () => {
  it('ships docs/ and the changelog beside dist, and has keywords and a description naming every format', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'docs', 'CHANGELOG.md']))
    expect(pkg.keywords).toEqual(expect.arrayContaining(['openai', 'gemini', 'anthropic', 'gateway', 'middleware']))
    expect(pkg.description).toMatch(/OpenAI/)
    expect(pkg.description).toMatch(/Gemini/)
    expect(pkg.description).toMatch(/Anthropic Messages/)
    // The project has no public address yet: none is invented.
    expect(pkg.repository).toBeUndefined()
    expect(pkg.homepage).toBeUndefined()
    const files = await packedFiles()
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json']))
    expect(files.filter((file) => file.startsWith('docs/')).length).toBeGreaterThan(0)
  })

  it('every relative link in README.md resolves to a file inside the packed package', async () => {
    const files = new Set(await packedFiles())
    const readme = await readFile(path.join(root, 'README.md'), 'utf8')
    const links = relativeLinks(readme)
    expect(links.length).toBeGreaterThan(0)
    const packed = (target: string) => {
      const file = path.posix.normalize(target).replace(/^\.\//, '').replace(/\/$/, '')
      // A link to a folder resolves when the folder ships a file.
      return files.has(file) || [...files].some((f) => f.startsWith(`${file}/`))
    }
    expect(links.filter((target) => !packed(target))).toEqual([])
  })
})

describe('relativeLinks', () => {
  it('finds inline and reference links outside code, and leaves out web addresses and fragments', () => {
    const text = [
      'See [the guide](docs/guides/a.md#part) and ![a picture](./docs/b.png "title").',
      '[ref]: docs/c.md',
      'Not [this](https://example.com) nor [that](#anchor) nor `[code](x.md)`.',
      '```md',
      '[fenced](y.md)',
      '```',
    ].join('\n')
    expect(relativeLinks(text)).toEqual(['docs/guides/a.md', './docs/b.png', 'docs/c.md'])
  })
})
