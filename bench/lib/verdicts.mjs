// The performance targets of DESIGN §8 (and the first wave's where §8 has none yet) against what one run measured.
import { hostileVerdicts } from '../parts/hostile.mjs'

/** The targets against what this run measured; `ok` is undefined where the run did not measure it. */
export function verdictsOf(results) {
  const mb = (bytes) => `${Math.round(bytes / 1048576)} MiB`
  const v = []
  const lat = results.latency?.rows
  const thr = results.throughput
  const fmt = (value, digits = 2, unit = '') => (Number.isFinite(value) ? `${value.toFixed(digits)}${unit}` : '—')
  const added = lat?.['gw-node']?.added50.median
  const portkeyAdded = lat?.portkey?.added50.median
  v.push({
    target: 'node adapter added p50 at c=1 ≤ +0.35 ms over direct',
    measured: `${fmt(added, 3, ' ms')}`,
    ok: Number.isFinite(added) ? added <= 0.35 : undefined,
  })
  const vsPortkey = added / portkeyAdded
  v.push({
    target: 'node adapter added p50 ≤ 0.3× Portkey’s',
    measured: fmt(vsPortkey, 2, '×'),
    ok: Number.isFinite(vsPortkey) ? vsPortkey <= 0.3 : undefined,
  })
  const r = thr?.ratios ?? {}
  const check = (target, s, limit) =>
    v.push({ target, measured: fmt(s?.median, 2, '×'), ok: Number.isFinite(s?.median) ? s.median >= limit : undefined })
  check('node adapter req/s at c=32 ≥ 0.8× the floor', r.nodeVsFloor, 0.8)
  check('node adapter req/s at c=32 ≥ 6× Portkey', r.nodeVsPortkey, 6)
  check('Express adapter req/s at c=32 ≥ 1.0× bare Express + undici', r.expressVsBare, 1.0)
  check('Express adapter req/s at c=32 ≥ 1.5× http-proxy-middleware', r.expressVsHpm, 1.5)
  const keyedAdded = results.repeats?.memoryAddedP50
  v.push({
    target: 'Idempotency-Key (memory store): p50 ≤ plain + 0.1 ms',
    measured: fmt(keyedAdded, 3, ' ms'),
    ok: Number.isFinite(keyedAdded) ? keyedAdded <= 0.1 : undefined,
  })
  const sse = results.sse?.rows
  for (const id of ['gw-node', 'gw-express', 'gw-koa']) {
    const row = sse?.[id]
    if (!row) continue
    const t = row.addedTtft.median
    v.push({ target: `SSE added TTFT ≤ 0.5 ms (${row.label})`, measured: fmt(t, 3, ' ms'), ok: Number.isFinite(t) ? t <= 0.5 : undefined })
    const direct = sse.direct
    // Buffering shows as bursts: frames arriving together, the median gap collapsing towards 0.
    const unbuffered = row.incomplete === 0 && row.frames === direct.frames && row.gap50.median >= 0.5 * direct.gap50.median
    v.push({
      target: `SSE every frame forwarded unbuffered (${row.label})`,
      measured: `${row.frames} frames (direct ${direct.frames}); median gap ${fmt(row.gap50.median, 2, ' ms')} (direct ${fmt(direct.gap50.median, 2, ' ms')}); coalesced ${fmt(row.coalescedPct, 1, ' %')} (direct ${fmt(direct.coalescedPct, 1, ' %')})`,
      ok: unbuffered,
    })
  }
  for (const [kind, row] of Object.entries(results.hash?.rows ?? {})) {
    v.push({
      target: `hash of a ${mb(results.hash.bytes)} body ≤ 1.3× the floor (${kind}, from text)`,
      measured: fmt(row.ratioText.median, 2, '×'),
      ok: row.ratioText.median <= 1.3,
    })
  }
  for (const row of results.stall?.rows ?? []) {
    if (row.id !== 'gw-node') continue
    v.push({
      target: `small p99 with ${mb(results.stall.bytes)} bodies in flight ≤ 2× without (${row.kind})`,
      measured: fmt(row.ratio.median, 1, '×'),
      ok: row.ratio.median <= 2,
    })
  }
  for (const row of results.stall?.rows ?? []) {
    if (row.id !== 'gw-node') continue
    const floor = results.stall.rows.find((other) => other.id === 'floor-node' && other.kind === row.kind)
    if (!floor) continue
    const rate = row.bigPerSecond / floor.bigPerSecond
    const stall = row.loadedLoop.max
    const floorStall = floor.loadedLoop.max
    v.push({
      target: `${mb(results.stall.bytes)} bodies: big requests completed per second ≥ 0.8× the floor with the longest loop stall ≤ the floor's (${row.kind})`,
      measured: `${fmt(row.bigPerSecond, 2, '/s')} vs ${fmt(floor.bigPerSecond, 2, '/s')} (${fmt(rate, 2, '×')}); stall ${fmt(stall, 1, ' ms')} vs ${fmt(floorStall, 1, ' ms')}`,
      ok: Number.isFinite(rate) && Number.isFinite(stall) ? rate >= 0.8 && stall <= floorStall : undefined,
    })
  }
  for (const kind of ['whole', 'stream']) {
    const row = results.client?.rows?.[kind]
    if (!row) continue
    v.push({
      target: `model-gateway/client on a clean call (${kind === 'whole' ? 'whole answer' : 'stream'}): p50 within the spread of plain fetch`,
      measured: `${fmt(row.added, 3, ' ms')} (spread ${fmt(row.width, 3, ' ms')})`,
      ok: Number.isFinite(row.added) ? row.withinSpread : undefined,
    })
  }
  v.push(...hostileVerdicts(results.stall?.hostile))
  for (const row of results.inflight?.rows ?? []) {
    if (row.id !== 'gw-node') continue
    v.push({
      target: `peak RSS growth per in-flight ${mb(results.inflight.bytes)} request ≤ 3× the body (${row.kind})`,
      measured: fmt(row.perBody, 2, '×'),
      ok: row.perBody <= 3,
    })
  }
  return v
}
