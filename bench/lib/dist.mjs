// The package as the bench parts load it: its built entries from dist/, and source modules no entry exports bundled
// by esbuild into dist/ (their packages left to node_modules), so a row times the gateway's own code.
import { fileURLToPath, pathToFileURL } from 'node:url'

const dist = new URL('../../dist/', import.meta.url)
const root = fileURLToPath(new URL('../../', import.meta.url))

/** A built entry of the package (`index.js`, `node.js`, `testing.js`). */
export const loadDist = (name) => import(pathToFileURL(fileURLToPath(new URL(name, dist))).href)

/**
 * The source modules `exports` names (`{ name: 'src/…/file.ts' }`), bundled into `dist/<outName>` and imported: one
 * module re-exporting each name from its file.
 */
export async function loadSource(outName, exports) {
  const { build } = await import('esbuild')
  const outfile = fileURLToPath(new URL(outName, dist))
  const contents = Object.entries(exports)
    .map(([name, file]) => `export { ${name} } from './${file}'\n`)
    .join('')
  await build({
    stdin: { contents, resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'error',
  })
  return import(pathToFileURL(outfile).href)
}

/** One whole POST's time in ms, its answer read; throws on any status but 200. */
export async function timedPost(pool, options) {
  const started = process.hrtime.bigint()
  const res = await pool.request({ method: 'POST', ...options })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`bench call answered ${res.statusCode}`)
  return Number(process.hrtime.bigint() - started) / 1e6
}
