// The console script's second part: what the gateway keeps for the owner. Recoveries through the public endpoints
// (list, lookup by body, get, delete, delete-all after its dry run) and background responses (list, events, cancel).

/** Recoveries and background responses. */
export const JS_KEPT = String.raw`
var HASH = /^[0-9a-f]{16}$/
var lastList = []

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2) } catch (e) { return text }
}
// The answer's text, whichever format kept it: chat, Responses, Gemini, Anthropic.
function answerText(raw) {
  var value
  try { value = JSON.parse(raw) } catch (e) { return '' }
  var parts = []
  function add(t) { if (typeof t === 'string' && t) parts.push(t) }
  ;(value.choices || []).forEach(function (c) { if (c.message) add(c.message.content); else add(c.text) })
  ;(value.output || []).forEach(function (o) { (o.content || []).forEach(function (c) { add(c.text) }) })
  ;(value.candidates || []).forEach(function (c) { ((c.content && c.content.parts) || []).forEach(function (p) { add(p.text) }) })
  if (Array.isArray(value.content)) value.content.forEach(function (c) { add(c.text) })
  return parts.join('\n\n')
}
function curlOf(id) {
  return 'curl -sS -H "' + KEY_HEADER + ': ' + KEY_PREFIX + '$MODEL_GATEWAY_KEY" \'' + location.origin + root + '/v1/recoveries/' + id + '\''
}

function renderRecoveries(items, what) {
  lastList = items
  var rows = items.map(function (item) {
    return [h('code', null, item.request_id), when(item.created_at), item.interrupted_reason, h('code', null, item.request_body_hash),
      h('button', { type: 'button', onclick: function () { openRecovery(item.request_id) }, 'aria-label': 'View record ' + item.request_id }, 'View')]
  })
  fill($('recoveries-list'), items.length
    ? table(what + ': ' + items.length + ' record(s), newest first', ['Request id', 'Kept at', 'Why', 'Body hash', ''], rows)
    : h('p', { class: 'muted' }, what + ': no records.'))
}
function listRecoveries() {
  $('recovery-detail').hidden = true
  return request('GET', '/v1/recoveries').then(function (body) { renderRecoveries(body.items, 'All records') }).catch(fail)
}
function searchRecoveries(event) {
  event.preventDefault()
  var text = $('search').value.trim()
  if (!text) return listRecoveries()
  if (HASH.test(text)) {
    return request('GET', '/v1/recoveries').then(function (body) {
      renderRecoveries(body.items.filter(function (i) { return i.request_body_hash === text }), 'Records with hash ' + text)
    }).catch(fail)
  }
  try { JSON.parse(text) } catch (e) { return say('Paste the request body as JSON, or a 16-character body hash.') }
  // The gateway computes the canonical hash of the body as it does for every lookup.
  return request('POST', '/v1/recoveries/lookup', text).then(function (body) { renderRecoveries(body.items, 'Records of this body') }).catch(fail)
}
function openRecovery(id) {
  var box = $('recovery-detail')
  request('GET', '/v1/recoveries/' + encodeURIComponent(id)).then(function (record) {
    var text = answerText(record.response.body_raw)
    var curl = curlOf(record.request_id)
    fill(box, [
      h('h3', { tabindex: '-1', id: 'recovery-title' }, 'Record ' + record.request_id),
      h('dl', null, [h('dt', null, 'Kept at'), h('dd', null, when(record.created_at)), h('dt', null, 'Why'), h('dd', null, record.interrupted_reason),
        h('dt', null, 'Model'), h('dd', null, record.request.model), h('dt', null, 'Path'), h('dd', null, record.request.path),
        h('dt', null, 'Body hash'), h('dd', null, record.request_body_hash), h('dt', null, 'Answer status'), h('dd', null, String(record.response.status))]),
      h('h4', null, 'Answer text'), h('pre', { id: 'answer-text', tabindex: '0' }, text || '(no text in this answer)'),
      h('details', null, [h('summary', null, 'Answer as kept (JSON)'), h('pre', { tabindex: '0' }, pretty(record.response.body_raw))]),
      h('details', null, [h('summary', null, 'Request'), h('pre', { tabindex: '0' }, pretty(record.request.body_raw))]),
      h('div', { class: 'row' }, [
        h('button', { type: 'button', onclick: function () {
          (navigator.clipboard ? navigator.clipboard.writeText(curl) : Promise.reject(new Error('no clipboard'))).then(
            function () { say('Copied: ' + curl) }, function () { say(curl) })
        } }, 'Copy as curl'),
        h('button', { type: 'button', class: 'danger', onclick: function () { deleteRecovery(record.request_id) } }, 'Delete this record'),
        h('button', { type: 'button', onclick: function () { box.hidden = true } }, 'Close')]),
    ])
    box.hidden = false
    $('recovery-title').focus()
  }).catch(fail)
}
function deleteRecovery(id) {
  request('DELETE', '/v1/recoveries/' + encodeURIComponent(id)).then(function () {
    $('recovery-detail').hidden = true
    say('Record ' + id + ' deleted.')
    return request('GET', '/v1/recoveries').then(function (body) { renderRecoveries(body.items, 'All records') })
  }).catch(fail)
}
function deleteAll() {
  var box = $('delete-all-confirm')
  request('DELETE', '/v1/recoveries?all=true&dry_run=true').then(function (dry) {
    var n = dry.would_delete
    fill(box, [h('p', { role: 'alert' }, n + ' record(s) would be deleted. This cannot be undone.'),
      h('div', { class: 'row' }, [
        h('button', { type: 'button', class: 'danger', id: 'delete-all-yes', disabled: n === 0, onclick: function () {
          request('DELETE', '/v1/recoveries?all=true').then(function (done) {
            box.hidden = true; say(done.deleted + ' record(s) deleted.'); listRecoveries()
          }).catch(fail)
        } }, 'Delete ' + n + ' record(s)'),
        h('button', { type: 'button', onclick: function () { box.hidden = true } }, 'Cancel')])])
    box.hidden = false
    $('delete-all-yes').focus()
  }).catch(fail)
}
views.recoveries = function () { $('delete-all-confirm').hidden = true; listRecoveries() }

var ENDED = { completed: 1, failed: 1, cancelled: 1, incomplete: 1, gone: 1 }
function listBackground() {
  return api('background').then(function (body) {
    var rows = body.items.map(function (item) {
      return [h('code', null, item.id), item.model || '-', h('span', { class: 'badge ' + item.status }, item.status), num(item.events), when(item.created_at),
        h('span', null, [
          h('button', { type: 'button', onclick: function () { openBackground(item.id) }, 'aria-label': 'Events of ' + item.id }, 'Events'),
          ENDED[item.status] ? null : h('button', { type: 'button', class: 'danger', onclick: function () { cancelBackground(item.id) }, 'aria-label': 'Cancel ' + item.id }, 'Cancel')])]
    })
    fill($('background-list'), body.items.length
      ? table('Background responses, newest first', ['Id', 'Model', 'Status', 'Events', 'Created', ''], rows)
      : h('p', { class: 'muted' }, 'No background responses.'))
  }).catch(fail)
}
function openBackground(id) {
  var box = $('background-detail')
  var list = h('ol', { id: 'background-events' })
  fill(box, [h('h3', { tabindex: '-1', id: 'background-detail-title' }, 'Events of ' + id), list,
    h('button', { type: 'button', onclick: function () { box.hidden = true; stopAll() } }, 'Close')])
  box.hidden = false
  $('background-detail-title').focus()
  stops.push(streamEvents('/v1/responses/' + encodeURIComponent(id) + '?stream=true', function (name, data) {
    var type = name
    try { type = JSON.parse(data).type || name } catch (e) {}
    list.appendChild(h('li', null, type))
  }, function (error) { if (error) say('Events: ' + error.message); else listBackground() }))
}
function cancelBackground(id) {
  request('POST', '/v1/responses/' + encodeURIComponent(id) + '/cancel').then(function (object) {
    say('Response ' + id + ' is ' + object.status + '.')
    return listBackground()
  }).catch(fail)
}
views.background = function () { $('background-detail').hidden = true; listBackground() }
`
