// The console script's first part: DOM helpers, the key (this tab's session storage, sent as a header), calls to
// the gateway, SSE read through fetch (EventSource cannot send a header), and the view switcher. Plain ES2017, no
// template literals, no innerHTML: every text goes in as text.

/** Helpers and session. */
export const JS_CORE = String.raw`'use strict'
var KEY_NAME = 'model-gateway-console-key'
var consolePath = document.querySelector('meta[name="console-path"]').getAttribute('content')
var root = (function () {
  var path = location.pathname
  var at = path.lastIndexOf(consolePath)
  return at >= 0 ? path.slice(0, at) : ''
})()
var session = { key: sessionStorage.getItem(KEY_NAME), owner: null, admin: false, usageDays: 30 }
var stops = []

function $(id) { return document.getElementById(id) }
function h(tag, attrs, children) {
  var el = document.createElement(tag)
  if (attrs) for (var name in attrs) {
    var value = attrs[name]
    if (value === undefined || value === null || value === false) continue
    if (name === 'onclick') el.addEventListener('click', value)
    else if (name === 'text') el.textContent = value
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  ;[].concat(children === undefined ? [] : children).forEach(function (child) {
    if (child === null || child === undefined || child === false) return
    el.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child)
  })
  return el
}
function fill(el, children) { el.textContent = ''; [].concat(children).forEach(function (c) { if (c) el.appendChild(c) }) }
function say(text) { $('status').textContent = text || '' }
function table(caption, heads, rows) {
  var head = h('tr', null, heads.map(function (t) { return h('th', { scope: 'col', class: /^(Requests|Tokens|Cost|Events|Bytes|Elapsed|Limit|Used|Remaining)/.test(t) ? 'num' : null }, t) }))
  var body = rows.map(function (cells) {
    return h('tr', null, cells.map(function (c) {
      if (c && c.num !== undefined) return h('td', { class: 'num' }, String(c.num))
      return h('td', null, c)
    }))
  })
  return h('div', { class: 'table', tabindex: '0', role: 'region', 'aria-label': caption }, h('table', null, [h('caption', null, caption), h('thead', null, head), h('tbody', null, body)]))
}
function num(n) { return { num: typeof n === 'number' ? n.toLocaleString('en-US') : n } }
function money(usd) { return '$' + usd }
function nanoUsd(nano) {
  var whole = Math.floor(nano / 1e9)
  var frac = String(Math.round(nano % 1e9)).padStart(9, '0').replace(/0+$/, '')
  while (frac.length < 2) frac += '0'
  return whole + '.' + frac
}
function when(seconds) { return new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' }
function bytes(n) { if (n === null || n === undefined) return '-'; return n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB' }
function seconds(ms) { return (ms / 1000).toFixed(1) + ' s' }

// The key as the gateway reads it (KEY_HEADER, KEY_PREFIX and EVENT_STREAM come from the registry, ahead of this script).
function keyHeaders() { var headers = {}; headers[KEY_HEADER] = KEY_PREFIX + session.key; return headers }
function request(method, path, body) {
  var init = { method: method, headers: keyHeaders(), cache: 'no-store' }
  if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = body }
  return fetch(root + path, init).then(function (res) {
    return res.text().then(function (text) {
      var json = null
      try { json = text ? JSON.parse(text) : null } catch (e) { json = null }
      if (!res.ok) {
        var message = json && ((json.error && json.error.message) || json.message) || ('HTTP ' + res.status)
        var error = new Error(message); error.status = res.status; error.body = json
        throw error
      }
      return json
    })
  })
}
function api(path) { return request('GET', consolePath + '/api/' + path) }

// Server-sent events over fetch: the key rides in a header. Calls onEvent(name, data) per event until stopped.
function streamEvents(path, onEvent, onEnd) {
  var controller = new AbortController()
  var headers = keyHeaders()
  headers.accept = EVENT_STREAM
  fetch(root + path, { headers: headers, signal: controller.signal, cache: 'no-store' })
    .then(function (res) {
      if (!res.ok || !res.body) throw new Error('HTTP ' + res.status)
      var reader = res.body.getReader()
      var decoder = new TextDecoder()
      var buffer = ''
      function pump() {
        return reader.read().then(function (step) {
          if (step.done) return onEnd && onEnd(null)
          buffer += decoder.decode(step.value, { stream: true }).replace(/\r\n/g, '\n')
          var end
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            var block = buffer.slice(0, end); buffer = buffer.slice(end + 2)
            var name = 'message', data = []
            block.split('\n').forEach(function (line) {
              if (line.indexOf('event:') === 0) name = line.slice(6).trim()
              else if (line.indexOf('data:') === 0) data.push(line.slice(5).replace(/^ /, ''))
            })
            if (data.length) onEvent(name, data.join('\n'))
          }
          return pump()
        })
      }
      return pump()
    })
    .catch(function (error) { if (error.name !== 'AbortError' && onEnd) onEnd(error) })
  return function () { controller.abort() }
}

function stopAll() { stops.splice(0).forEach(function (stop) { stop() }) }

var views = {}
function show(name) {
  if (!session.key) return
  if (!views[name] || (name === 'admin' && !session.admin)) name = session.owner ? 'recoveries' : 'admin'
  stopAll()
  say('')
  document.querySelectorAll('.view').forEach(function (v) { v.hidden = v.id !== 'view-' + name })
  document.querySelectorAll('nav a').forEach(function (a) {
    if (a.getAttribute('data-view') === name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current')
  })
  views[name]()
}
function fail(error) { say(''); var el = $('status'); el.textContent = 'Error: ' + error.message }
`
