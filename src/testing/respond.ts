// Writing answers: whole bodies, delays that a departed client cancels, and streams paced frame by frame.

import type { ServerResponse } from 'node:http'
import zlib from 'node:zlib'
import { type JsonObject, num } from './shared.js'

/** Per-request state; `recorded` is the request's recording, whose `response` gathers what is written. */
export interface State {
  timer: NodeJS.Timeout | null
  closed: boolean
  stream: boolean
  selfDestroyed: boolean
  headers: JsonObject | undefined
  recorded?: { response: string } | undefined
}

/** Answer with one complete body (and any `mock.headers`). */
export function send(res: ServerResponse, st: State, status: number, type: string, body: string): void {
  const h: Record<string, string | number> = { 'content-type': type, 'content-length': Buffer.byteLength(body) }
  if (st.headers) Object.assign(h, st.headers)
  res.writeHead(status, h)
  if (st.recorded) st.recorded.response = body
  res.end(body)
}

/** Decoded bytes of one gzip member of a bomb: the member is compressed once and sent as many times as needed. */
const BOMB_MEMBER_BYTES = 16 * 1024 * 1024
let bombMember: Buffer | undefined

/**
 * Answer 200 with `content-encoding: gzip` and a body that decodes to `bytes` zero bytes (at least): one small
 * gzip member repeated, which decoders read as one body, written with backpressure so no side holds it whole.
 */
export function sendGzipBomb(res: ServerResponse, st: State, bytes: number): void {
  bombMember ??= zlib.gzipSync(Buffer.alloc(BOMB_MEMBER_BYTES), { level: 9 })
  const member = bombMember
  const h: Record<string, string | number> = { 'content-type': 'application/json', 'content-encoding': 'gzip' }
  if (st.headers) Object.assign(h, st.headers)
  res.writeHead(200, h)
  let left = Math.ceil(bytes / BOMB_MEMBER_BYTES)
  const next = (): void => {
    while (left > 0 && !st.closed) {
      left--
      if (!res.write(member)) {
        res.once('drain', next)
        return
      }
    }
    if (!st.closed) res.end()
  }
  next()
}

/** Run `fn` after `ms` (synchronously when 0), cancelled if the client goes away. */
export function after(st: State, ms: number, fn: () => void): void {
  if (ms > 0) {
    st.timer = setTimeout(() => {
      st.timer = null
      if (!st.closed) fn()
    }, ms)
  } else fn()
}

/** Write `frames` one by one (honouring backpressure and `frameDelay`), then end. */
function pump(
  res: ServerResponse,
  st: State,
  frames: readonly (string | Buffer)[],
  frameDelay: number,
  destroyAfter: number | undefined,
): void {
  let i = 0
  const step = () => {
    st.timer = null
    while (i < frames.length) {
      if (st.closed) return
      const frame = frames[i++] ?? ''
      if (st.recorded) st.recorded.response += typeof frame === 'string' ? frame : frame.toString('latin1')
      if (destroyAfter !== undefined && i >= destroyAfter) {
        st.selfDestroyed = true
        res.write(frame, () => res.socket?.destroy())
        return
      }
      const ok = res.write(frame)
      if (i === frames.length) break
      if (frameDelay > 0) {
        st.timer = setTimeout(step, frameDelay)
        return
      }
      if (!ok) {
        res.once('drain', step)
        return
      }
    }
    if (!st.closed) res.end()
  }
  step()
}

/** Writes a stream's frames: `stream` below, or a cloud's framing of the same events (Bedrock's event streams). */
export type StreamWriter = (res: ServerResponse, st: State, type: string, frames: string[], ctl: JsonObject) => void

/**
 * Answer 200 with `frames` streamed as `mock.first_frame_delay_ms`, `mock.chunk_delay_ms` and `mock.destroy_after_frames`
 * say; binary frames (an event stream's) are written as they are.
 */
export function stream(res: ServerResponse, st: State, type: string, frames: readonly (string | Buffer)[], ctl: JsonObject): void {
  const h: Record<string, string> = { 'content-type': type, 'cache-control': 'no-cache' }
  if (st.headers) Object.assign(h, st.headers)
  res.writeHead(200, h)
  const da = num(ctl.destroy_after_frames)
  const start = () => pump(res, st, frames, num(ctl.chunk_delay_ms) ?? 0, da === undefined ? undefined : Math.max(1, Math.floor(da)))
  const firstFrameDelay = num(ctl.first_frame_delay_ms) ?? 0
  if (firstFrameDelay === 0) start()
  else {
    // The head goes out now, alone: what an upstream does whose model thinks before its first token.
    res.flushHeaders()
    after(st, firstFrameDelay, start)
  }
}
