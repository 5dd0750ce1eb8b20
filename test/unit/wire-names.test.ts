import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

// The wire belongs to the dialects: a path grammar, a framing's content type or a key scheme written anywhere else in
// src/ is a second copy that the next dialect would have to change. The browser-safe client (which cannot import the
// registry) and the testing kit (which plays the upstreams) are the exceptions.
const SRC = join(import.meta.dirname, '../../src')
// The console's page is browser code too, but the server writes it: its key header and event-stream type come from
// the registry (`console/assets.ts`), so it is checked like the rest.
const ALLOWED = ['dialects/', 'client/', 'testing/']

/** What only a dialect may name: Google's version prefix, a `{model}:{method}` path grammar, SSE, a key scheme. */
const WIRE_NAMES: ReadonlyArray<[string, RegExp]> = [
  ['/v1beta', /\/v1beta\b/],
  ['a {model}:{method} grammar', /(?<!\$)\{model\}:|:\{method\}/],
  ['text/event-stream', /text\/event-stream/i],
  ['Bearer', /\bBearer\b/],
]

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sourceFiles(path)
    else if (entry.name.endsWith('.ts')) yield path
  }
}

/** Every line of src/ outside the allowed folders that names one of the wire names, as `file:line: name`. */
function wireNamesOutsideDialects(): string[] {
  const found: string[] = []
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file).split('\\').join('/')
    if (ALLOWED.some((folder) => rel.startsWith(folder))) continue
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        for (const [name, pattern] of WIRE_NAMES) if (pattern.test(line)) found.push(`${rel}:${index + 1}: ${name}`)
      })
  }
  return found
}

describe('the wire is named in the dialects alone', () => {
  it('the patterns catch what they are for, and leave template literals and other versions alone', () => {
    const caught = (line: string) => WIRE_NAMES.filter(([, pattern]) => pattern.test(line)).map(([name]) => name)
    expect(caught("const path = '/v1beta/models'")).toEqual(['/v1beta'])
    expect(caught("route.path.indexOf('{model}:')")).toEqual(['a {model}:{method} grammar'])
    expect(caught('`/models/{model}:{method}`')).toEqual(['a {model}:{method} grammar'])
    expect(caught("headers['content-type'] = 'text/event-stream'")).toEqual(['text/event-stream'])
    // Written with the dollar apart, as the lines read in a source file.
    const dollar = '$'
    expect(caught(`\`Bearer ${dollar}{key}\``)).toEqual(['Bearer'])
    expect(caught(`const name = \`${dollar}{model}:${dollar}{n}\`; // /v1/models`)).toEqual([])
  })

  it('no file of src/ outside dialects/, client/ and testing/ names a path grammar, SSE or a key scheme', () => {
    expect(wireNamesOutsideDialects()).toEqual([])
  })
})
