// The console script's last part: running calls (live, one SSE stream read through fetch), usage by day as a chart
// with its table, limits and what remains, the admin view, and sign-in.

/** Running calls, usage, admin and start-up. */
export const JS_LIVE = `
function callRows(items, withOwner) {
  return items.map(function (c) {
    var row = [c.model, c.operation + (c.stream ? ' (stream)' : '') + (c.background ? ' (background)' : ''), num(seconds(c.elapsedMs)), num(bytes(c.bytes)), h('code', null, c.requestId)]
    if (withOwner) row.unshift(h('code', null, c.owner))
    return row
  })
}
function watchCalls(target, all, label) {
  var live = $('calls-live')
  var stop = streamEvents(consolePath + '/api/calls/stream' + (all ? '?all=true' : ''), function (name, data) {
    if (name !== 'calls') return
    var items = JSON.parse(data).items
    if (live && !all) live.textContent = 'Live: ' + items.length + ' call(s) running now.'
    var heads = ['Model', 'Kind', 'Elapsed', 'Bytes so far', 'Request id']
    if (all) heads.unshift('Owner')
    fill(target, items.length ? table(label, heads, callRows(items, all)) : h('p', { class: 'muted' }, 'No call running now.'))
  }, function (error) { if (live && !all) live.textContent = error ? 'Live view stopped: ' + error.message : 'Live view ended.' })
  stops.push(stop)
}
views.calls = function () { $('calls-live').textContent = 'Connecting...'; watchCalls($('calls-list'), false, 'Your running calls') }

var metric = 'cost'
var usage = null
function lastDays(days, n) {
  var byDay = {}
  days.forEach(function (d) { byDay[d.day] = d })
  var out = []
  var today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())
  for (var i = n - 1; i >= 0; i--) {
    var day = new Date(today - i * 86400000).toISOString().slice(0, 10)
    out.push(byDay[day] || { day: day, requests: 0, tokens: 0, cost: 0 })
  }
  return out
}
function chart(days) {
  var NS = 'http://www.w3.org/2000/svg'
  function s(tag, attrs, text) { var el = document.createElementNS(NS, tag); for (var k in attrs) el.setAttribute(k, attrs[k]); if (text !== undefined) el.textContent = text; return el }
  var values = days.map(function (d) { return d[metric] })
  var max = Math.max.apply(null, values.concat([0])) || 1
  var bar = 14, gap = 4, height = 140, left = 4
  var width = left + days.length * (bar + gap) + 20
  var label = { cost: 'Cost (USD)', requests: 'Requests', tokens: 'Tokens' }[metric]
  var svg = s('svg', { viewBox: '0 0 ' + width + ' ' + (height + 20), preserveAspectRatio: 'xMinYMin meet', role: 'img', 'aria-label': label + ' per day, the last ' + days.length + ' days; the table below has the figures' })
  svg.appendChild(s('line', { x1: 0, y1: height, x2: width, y2: height }))
  days.forEach(function (d, i) {
    var v = d[metric]
    var hgt = Math.max(v > 0 ? 2 : 0, Math.round(v / max * (height - 10)))
    var rect = s('rect', { class: 'bar', x: left + i * (bar + gap), y: height - hgt, width: bar, height: hgt })
    rect.appendChild(s('title', {}, d.day + ': ' + (metric === 'cost' ? money(nanoUsd(v)) : v.toLocaleString('en-US'))))
    svg.appendChild(rect)
    if (i === 0 || i === days.length - 1) svg.appendChild(s('text', { x: left + i * (bar + gap), y: height + 14 }, d.day.slice(5)))
  })
  var top = metric === 'cost' ? money(nanoUsd(max)) : max.toLocaleString('en-US')
  fill($('usage-chart'), [svg, h('figcaption', { class: 'muted' }, label + ' per day (UTC), highest ' + top)])
}
function renderUsage() {
  var u = usage
  var t = u.today
  fill($('usage-today'), [
    h('div', { class: 'card' }, ['Requests today', h('b', { id: 'today-requests' }, t.requests.toLocaleString('en-US'))]),
    h('div', { class: 'card' }, ['Tokens today', h('b', { id: 'today-tokens' }, t.tokens.toLocaleString('en-US'))]),
    h('div', { class: 'card' }, ['Cost today', h('b', { id: 'today-cost' }, money(nanoUsd(t.cost)))]),
    h('div', { class: 'card' }, ['Cost, ' + u.usageDays + ' days', h('b', null, money(nanoUsd(u.total.cost)))])])
  chart(lastDays(u.days, Math.min(u.usageDays, 30)))
  var limits = u.limits
  var names = { requestsPerMinute: 'Requests per minute', tokensPerMinute: 'Tokens per minute', costPerDay: 'Cost per day (USD)' }
  fill($('usage-limits'), limits && Object.keys(limits).length
    ? table('Your limits and what remains now', ['What', 'Limit', 'Used', 'Remaining'], Object.keys(limits).map(function (k) {
      var l = limits[k], m = k === 'costPerDay' ? money : function (x) { return x }
      return [names[k], num(m(l.limit)), num(m(l.used)), num(m(l.remaining))]
    }))
    : h('p', { class: 'muted' }, 'No limits apply to you.'))
  fill($('usage-days'), u.days.length
    ? table('Usage by day (UTC), kept ' + u.usageDays + ' days', ['Day', 'Requests', 'Tokens', 'Cost'], u.days.slice().reverse().map(function (d) {
      return [d.day, num(d.requests), num(d.tokens), num(money(d.costUsd))]
    }))
    : h('p', { class: 'muted' }, 'No usage yet.'))
}
views.usage = function () { api('usage').then(function (body) { usage = body; renderUsage() }).catch(fail) }
document.querySelectorAll('[data-metric]').forEach(function (b) {
  b.addEventListener('click', function () {
    metric = b.getAttribute('data-metric')
    document.querySelectorAll('[data-metric]').forEach(function (o) { o.setAttribute('aria-pressed', String(o === b)) })
    if (usage) renderUsage()
  })
})

views.admin = function () {
  api('admin').then(function (body) {
    fill($('admin-owners'), body.owners.length
      ? table('Every owner, the last ' + body.usageDays + ' days', ['Owner', 'Requests', 'Tokens', 'Cost'], body.owners.map(function (o) {
        return [h('code', null, o.owner), num(o.requests), num(o.tokens), num(money(o.costUsd))]
      }))
      : h('p', { class: 'muted' }, 'No usage yet.'))
    fill($('admin-models'), table('Models and their upstreams', ['Model', 'Upstream', 'Type', 'Upstream model', 'Circuit', 'Fallbacks'], body.models.map(function (m) {
      return [m.id, m.upstream, m.type, m.upstreamModel, h('span', { class: 'badge ' + m.circuit }, m.circuit), m.fallbacks.join(', ') || '-']
    })))
  }).catch(fail)
  watchCalls($('admin-calls'), true, 'Every running call (no bodies)')
}

function signedIn() {
  $('sign-in').hidden = true
  $('nav').hidden = false
  $('sign-out').hidden = false
  var who = $('who')
  who.hidden = false
  who.textContent = (session.owner ? 'Owner ' + session.owner.slice(0, 12) : 'No owner') + (session.admin ? ' (admin)' : '')
  document.querySelectorAll('[data-admin]').forEach(function (el) { el.hidden = !session.admin })
  document.querySelectorAll('nav a').forEach(function (a) {
    var owned = a.getAttribute('data-view') !== 'admin'
    a.parentNode.hidden = owned ? !session.owner : !session.admin
  })
  show(location.hash.slice(1))
}
function signIn(key) {
  session.key = key
  return api('session').then(function (body) {
    session.owner = body.owner; session.admin = body.admin; session.usageDays = body.usageDays
    sessionStorage.setItem(KEY_NAME, key)
    $('sign-in-error').textContent = ''
    signedIn()
  }, function (error) {
    session.key = null
    sessionStorage.removeItem(KEY_NAME)
    $('sign-in-error').textContent = error.status === 401 ? 'That key was not accepted: it is neither an API key of this gateway nor a console admin key.' : 'Sign-in failed: ' + error.message
    $('key').focus()
  })
}
$('sign-in-form').addEventListener('submit', function (event) {
  event.preventDefault()
  var key = $('key').value.trim()
  $('key').value = ''
  if (key) signIn(key)
})
$('sign-out').addEventListener('click', function () {
  stopAll()
  sessionStorage.removeItem(KEY_NAME)
  session = { key: null, owner: null, admin: false, usageDays: 30 }
  location.hash = ''
  location.reload()
})
$('search-form').addEventListener('submit', searchRecoveries)
$('show-all').addEventListener('click', function () { $('search').value = ''; listRecoveries() })
$('delete-all').addEventListener('click', deleteAll)
$('background-refresh').addEventListener('click', listBackground)
window.addEventListener('hashchange', function () { if (session.key && $('sign-in').hidden) show(location.hash.slice(1)) })
if (session.key) signIn(session.key)
else $('key').focus()
document.documentElement.setAttribute('data-ready', 'true')
`
