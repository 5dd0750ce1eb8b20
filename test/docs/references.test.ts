// The reference pages cannot drift from the code: every option of the public option types, every error code and
// every diagnostics channel (with every field of its message) is read from the sources with TypeScript's compiler
// and looked up in docs/reference/.
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { DEFAULTS, KNOWN_KEYS } from '../../src/config/defaults.js'
import { STATUS_BY_CODE } from '../../src/errors.js'
import { gatewayChannels } from '../../src/observe/channels.js'
import { readDoc, root, section } from './markdown.js'

/** One documented option: its path as the reference names it, whether it is required, its JSDoc `@default`. */
interface OptionFact {
  path: string
  required: boolean
  jsdocDefault: string | undefined
}

/** The public option types, each with the path prefix its options have in docs/reference/options.md. */
const OPTION_ROOTS: { file: string; type: string; prefix: string }[] = [
  { file: 'src/types.ts', type: 'GatewayOptions', prefix: '' },
  { file: 'adapters/node.ts', type: 'NodeHandlerOptions', prefix: 'nodeHandler.' },
  { file: 'adapters/koa.ts', type: 'KoaMiddlewareOptions', prefix: 'koaMiddleware.' },
  { file: 'src/websocket/options.ts', type: 'UpgradeHandlerOptions', prefix: 'upgradeHandler.' },
  { file: 'src/client/options.ts', type: 'RecoveringFetchOptions', prefix: 'createRecoveringFetch.' },
  { file: 'src/client/recoveries-client.ts', type: 'RecoveriesClientOptions', prefix: 'createRecoveriesClient.' },
  { file: 'src/otel/instrument.ts', type: 'InstrumentOptions', prefix: 'instrumentGateway.' },
  { file: 'src/testing/types.ts', type: 'MockUpstreamOptions', prefix: 'startMockUpstream.' },
]

const program = ts.createProgram([...OPTION_ROOTS.map((r) => path.join(root, r.file)), path.join(root, 'src/observe/channels.ts')], {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
})
const checker = program.getTypeChecker()
const srcDirs = [path.join(root, 'src'), path.join(root, 'adapters')]

/** The interface or type alias `name` declared in `file`. */
function declaredType(file: string, name: string): ts.Type {
  const source = program.getSourceFile(path.join(root, file))
  if (!source) throw new Error(`${file} is not in the program`)
  let found: ts.Node | undefined
  source.forEachChild((node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === name) found = node
  })
  if (!found) throw new Error(`${file} declares no ${name}`)
  return checker.getTypeAtLocation(found)
}

/** Whether a type is an object of the project's own making whose properties are options themselves. */
function isOwnOptionObject(type: ts.Type): boolean {
  if (!(type.flags & ts.TypeFlags.Object) || type.getCallSignatures().length > 0 || checker.isArrayLikeType(type)) return false
  const declaration = type.getSymbol()?.declarations?.[0]
  const file = declaration?.getSourceFile().fileName ?? ''
  return srcDirs.some((dir) => file.startsWith(dir)) && type.getProperties().length > 0
}

/** The object types an option's value may hold whose fields are options too, with the path segment they add. */
function nestedOf(type: ts.Type): { type: ts.Type; suffix: string }[] {
  const members = type.isUnion() ? type.types : [type]
  const nested: { type: ts.Type; suffix: string }[] = []
  for (const member of members) {
    if (checker.isArrayLikeType(member)) {
      const element = checker.getIndexTypeOfType(member, ts.IndexKind.Number)
      if (element) for (const inner of nestedOf(element)) nested.push({ type: inner.type, suffix: `[]${inner.suffix}` })
    } else if (isOwnOptionObject(member)) nested.push({ type: member, suffix: '' })
    else if (member.flags & ts.TypeFlags.Object && member.getProperties().length === 0) {
      const value = checker.getIndexTypeOfType(member, ts.IndexKind.String)
      if (value) for (const inner of nestedOf(value)) nested.push({ type: inner.type, suffix: `.<name>${inner.suffix}` })
    }
  }
  return nested
}

/** Every option under `type`, depth first, nested option objects included. */
function optionsOf(type: ts.Type, prefix: string, out: OptionFact[] = []): OptionFact[] {
  for (const property of checker.getPropertiesOfType(type)) {
    const declaration = property.valueDeclaration ?? property.declarations?.[0]
    if (!declaration) continue
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0
    const tag = ts.getJSDocTags(declaration).find((t) => t.tagName.text === 'default')
    const jsdocDefault = tag ? ts.getTextOfJSDocComment(tag.comment)?.trim() : undefined
    const optionPath = `${prefix}${property.name}`
    if (!out.some((o) => o.path === optionPath)) out.push({ path: optionPath, required: !optional, jsdocDefault })
    const value = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration))
    for (const inner of nestedOf(value)) optionsOf(inner.type, `${optionPath}${inner.suffix}.`, out)
  }
  return out
}

/** The cells of the table row whose first cell is `` `name` ``, or undefined. */
function rowOf(text: string, name: string): string[] | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`| \`${name}\` |`))
  return line
    ?.split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((cell) => cell.trim())
}

/** The leading literal of a JSDoc `@default` (`259200000 (3 days)` → `259200000`), as it must appear in the docs. */
function leadingLiteral(text: string): string {
  const first = /^(\{[^}]*\}|'[^']*'|`[^`]*`|\[[^\]]*\]|[^\s,(]+)/.exec(text)?.[1] ?? text
  return first.replace(/^`|`$/g, '')
}

describe('docs/reference/options.md', () => {
  const doc = readDoc('docs/reference/options.md')
  const facts = OPTION_ROOTS.flatMap((r) => optionsOf(declaredType(r.file, r.type), r.prefix))

  it('reads the option types (a sanity check on the walk itself)', () => {
    const paths = facts.map((f) => f.path)
    for (const expected of [
      'auth.apiKeys',
      'auth.authenticate',
      'upstreams.<name>.apiKeys[].weight',
      'upstreams.<name>.circuit.cooldownMs',
    ])
      expect(paths).toContain(expected)
    expect(paths).toContain('models[].fallbacks')
    expect(paths).toContain('logger.warn')
    expect(facts.find((f) => f.path === 'auth')?.required).toBe(true)
    expect(facts.find((f) => f.path === 'recovery.ttlMs')?.jsdocDefault).toMatch(/^259200000/)
  })

  it.each(facts.map((f) => [f.path, f] as const))('documents %s with its type, default and whether it is required', (name, fact) => {
    const row = rowOf(doc, name)
    expect(row, `no row "| \`${name}\` | type | default | required | meaning |" in docs/reference/options.md`).toBeDefined()
    const [, type, defaultCell, requiredCell, meaning] = row ?? []
    expect(type, `${name}: type cell`).toBeTruthy()
    expect(meaning, `${name}: meaning cell`).toBeTruthy()
    expect(requiredCell, `${name}: required cell`).toMatch(fact.required ? /^yes/ : /^no/)
    if (!fact.required) {
      expect(defaultCell, `${name}: default cell`).toBeTruthy()
      if (fact.jsdocDefault) expect(defaultCell, `${name}: @default ${fact.jsdocDefault}`).toContain(leadingLiteral(fact.jsdocDefault))
    }
  })

  it.each(
    Object.entries(DEFAULTS).flatMap(([group, values]) => Object.entries(values).map(([key, value]) => [group, key, value] as const)),
  )('states the default the code applies to %s.%s (%i)', (group, key, value) => {
    const name = group === 'circuit' ? `upstreams.<name>.circuit.${key}` : `${group}.${key}`
    expect(rowOf(doc, name)?.[2], name).toContain(`\`${value}\``)
  })

  it('documents every key the options check accepts (dialect upstream options included)', () => {
    const prefixes: Record<string, string> = { top: '', upstream: 'upstreams.<name>.', model: 'models[].' }
    const missing = Object.entries(KNOWN_KEYS).flatMap(([group, keys]) =>
      (keys as readonly string[]).map((key) => `${prefixes[group] ?? `${group}.`}${key}`).filter((name) => !rowOf(doc, name)),
    )
    expect(missing).toEqual([])
  })

  it('documents no option the types do not have', () => {
    const documented = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1])
    const known = new Set(facts.map((f) => f.path))
    expect(documented.filter((name) => name !== undefined && !known.has(name))).toEqual([])
  })
})

describe('docs/reference/errors.md', () => {
  const doc = readDoc('docs/reference/errors.md')
  const codes = Object.entries(STATUS_BY_CODE)

  it.each(codes)('lists %s with its status %i', (code, status) => {
    const row = rowOf(doc, code)
    expect(row, `no row "| \`${code}\` | status | when |" in docs/reference/errors.md`).toBeDefined()
    expect(row?.[1]).toContain(String(status))
  })

  it('lists invalid_options, the construction error', () => {
    expect(rowOf(doc, 'invalid_options')).toBeDefined()
  })
})

/** The property names of the message type published on a channel (its interface is named after the channel's key). */
function messageFields(key: string): string[] {
  const name = `${key[0]?.toUpperCase()}${key.slice(1)}Message`
  return checker.getPropertiesOfType(declaredType('src/observe/channels.ts', name)).map((p) => p.name)
}

describe('docs/reference/channels.md', () => {
  const doc = readDoc('docs/reference/channels.md')
  const channels = Object.entries(gatewayChannels)

  it.each(channels)('names every field of %s (%s)', (key, name) => {
    const part = section(doc, `\`${name}\``)
    expect(part, `no heading "## \`${name}\`" in docs/reference/channels.md`).not.toBe('')
    const fields = messageFields(key)
    expect(fields.length).toBeGreaterThan(1)
    for (const field of fields) expect(part, `${name}: field ${field}`).toMatch(new RegExp(`^\\| \`${field}\` \\|`, 'm'))
  })

  it('names every field of a usage event (onUsage)', () => {
    const part = section(doc, '`onUsage`')
    const fields = checker.getPropertiesOfType(declaredType('src/types.ts', 'UsageEvent')).map((p) => p.name)
    expect(fields).toContain('keyAlias')
    for (const field of fields) expect(part, `onUsage: field ${field}`).toMatch(new RegExp(`^\\| \`${field}\` \\|`, 'm'))
  })
})
