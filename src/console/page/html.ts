// The console's page: one HTML document, its style and script from the console's own path (no inline code, so the
// CSP forbids any), the console's path in a meta tag so the page finds the gateway's root behind any mount.

/** The page, for a console served at `path`. */
export function pageHtml(path: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="console-path" content="${path}">
<title>model-gateway console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="app.css">
<script src="app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <h1>model-gateway console</h1>
  <p class="who" id="who" hidden></p>
  <button type="button" id="sign-out" hidden>Sign out</button>
</header>
<nav id="nav" aria-label="Console sections" hidden>
  <ul>
    <li><a href="#recoveries" data-view="recoveries">Recoveries</a></li>
    <li><a href="#background" data-view="background">Background</a></li>
    <li><a href="#calls" data-view="calls">Running calls</a></li>
    <li><a href="#usage" data-view="usage">Usage</a></li>
    <li data-admin hidden><a href="#admin" data-view="admin">Admin</a></li>
  </ul>
</nav>
<main id="main" tabindex="-1">
  <p id="status" class="status" role="status" aria-live="polite"></p>
  <section id="sign-in" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Sign in</h2>
    <p>Your API key (or a console admin key) is kept in this tab only and sent in a header, never in an address.</p>
    <form id="sign-in-form">
      <label for="key">Key</label>
      <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required>
      <button type="submit">Sign in</button>
    </form>
    <p id="sign-in-error" class="error" role="alert"></p>
  </section>
  <section id="view-recoveries" class="view" aria-labelledby="recoveries-title" hidden>
    <h2 id="recoveries-title">Recoveries</h2>
    <p>Answers the gateway kept because the connection broke before they were delivered.</p>
    <form id="search-form" class="search">
      <label for="search">Find by request body (paste it) or by body hash</label>
      <textarea id="search" rows="3" spellcheck="false" placeholder='{"model": "...", "messages": [...]} or 6ded87ad1c72779a'></textarea>
      <div class="row">
        <button type="submit">Search</button>
        <button type="button" id="show-all">Show all</button>
        <button type="button" id="delete-all" class="danger">Delete all...</button>
      </div>
    </form>
    <div id="delete-all-confirm" class="confirm" hidden></div>
    <div id="recoveries-list"></div>
    <div id="recovery-detail" class="detail" hidden></div>
  </section>
  <section id="view-background" class="view" aria-labelledby="background-title" hidden>
    <h2 id="background-title">Background responses</h2>
    <div class="row"><button type="button" id="background-refresh">Refresh</button></div>
    <div id="background-list"></div>
    <div id="background-detail" class="detail" hidden></div>
  </section>
  <section id="view-calls" class="view" aria-labelledby="calls-title" hidden>
    <h2 id="calls-title">Running calls</h2>
    <p id="calls-live" class="muted">Connecting...</p>
    <div id="calls-list"></div>
  </section>
  <section id="view-usage" class="view" aria-labelledby="usage-title" hidden>
    <h2 id="usage-title">Usage</h2>
    <div id="usage-today" class="cards"></div>
    <div class="row" role="group" aria-label="Chart shows">
      <button type="button" data-metric="cost" aria-pressed="true">Cost</button>
      <button type="button" data-metric="requests" aria-pressed="false">Requests</button>
      <button type="button" data-metric="tokens" aria-pressed="false">Tokens</button>
    </div>
    <figure id="usage-chart" class="chart"></figure>
    <h3>Limits</h3>
    <div id="usage-limits"></div>
    <h3>By day</h3>
    <div id="usage-days"></div>
  </section>
  <section id="view-admin" class="view" aria-labelledby="admin-title" hidden>
    <h2 id="admin-title">Admin</h2>
    <h3>Owners</h3>
    <div id="admin-owners"></div>
    <h3>Models</h3>
    <div id="admin-models"></div>
    <h3>Running calls, every owner</h3>
    <div id="admin-calls"></div>
  </section>
</main>
</body>
</html>
`
}
