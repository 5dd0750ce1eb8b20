// The console's three files, as strings shipped inside the package's own modules: nothing to copy at build time,
// nothing fetched from anywhere at run time.
import { sse } from '../dialects/framing/index.js'
import { DEFAULT_DIALECT } from '../dialects/index.js'
import { PAGE_CSS } from './page/css.js'
import { pageHtml } from './page/html.js'
import { JS_CORE } from './page/js-core.js'
import { JS_KEPT } from './page/js-kept.js'
import { JS_LIVE } from './page/js-live.js'

/**
 * What the script sends and accepts on the wire, from the registry: the script runs in a browser, which cannot import
 * it. The default dialect declares its key header (a unit test holds it to that, and to its own `clientKey`).
 */
function wireOfScript(): string {
  const key = DEFAULT_DIALECT.keyHeader as { name: string; prefix: string }
  const values = { KEY_HEADER: key.name, KEY_PREFIX: key.prefix, EVENT_STREAM: sse.contentType }
  return Object.entries(values)
    .map(([name, value]) => `var ${name} = ${JSON.stringify(value)}\n`)
    .join('')
}

/** The page, its style and its script, for a console served at `path`. */
export function consoleAssets(path: string): { html: string; css: string; js: string } {
  // One scope for the script's three parts, and nothing of it on `window`.
  return { html: pageHtml(path), css: PAGE_CSS, js: `;(function () {\n${wireOfScript()}${JS_CORE}${JS_KEPT}${JS_LIVE}})()\n` }
}
