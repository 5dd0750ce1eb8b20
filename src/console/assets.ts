// The console's three files, as strings shipped inside the package's own modules: nothing to copy at build time,
// nothing fetched from anywhere at run time.
import { PAGE_CSS } from './page/css.js'
import { pageHtml } from './page/html.js'
import { JS_CORE } from './page/js-core.js'
import { JS_KEPT } from './page/js-kept.js'
import { JS_LIVE } from './page/js-live.js'

/** The page, its style and its script, for a console served at `path`. */
export function consoleAssets(path: string): { html: string; css: string; js: string } {
  // One scope for the script's three parts, and nothing of it on `window`.
  return { html: pageHtml(path), css: PAGE_CSS, js: `;(function () {\n${JS_CORE}${JS_KEPT}${JS_LIVE}})()\n` }
}
