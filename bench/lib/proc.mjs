// Child processes of the harness: every server runs in its own process, optionally pinned to a
// core, and every child is killed by pid when the harness ends, however it ends.
import { execFileSync, fork, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set()

function killAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  children.clear()
}
process.once('exit', killAll)
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killAll()
    process.exit(130)
  })
}

/** Core layout: with two cores or more the servers get one core and the mock plus the load generator another. */
export function planCores() {
  const cores = os.availableParallelism?.() ?? os.cpus().length
  let taskset = false
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    taskset = true
  } catch {}
  if (cores < 2 || !taskset) {
    return {
      cores,
      pinned: false,
      server: undefined,
      load: undefined,
      note: cores < 2 ? 'one core: no pinning' : 'taskset not found: no pinning',
    }
  }
  return { cores, pinned: true, server: '0', load: cores > 2 ? `1-${cores - 1}` : '1', note: '' }
}

/** Pins a process and all its threads to a core list; a no-op without a plan. @param {number | undefined} pid @param {string | undefined} cpus */
export function pin(pid, cpus) {
  if (pid === undefined || cpus === undefined) return
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' })
  } catch {}
}

/**
 * Forks one of the harness's own scripts with an IPC channel and waits for its `{ type: 'ready' }` message.
 * @param {string} script @param {string[]} args
 * `execPath` runs it under another program (valgrind), which then gets `execArgv`, node's path included.
 * @param {{ cpus?: string, env?: Record<string, string>, execArgv?: string[], execPath?: string, timeoutMs?: number }} [options]
 */
export async function startChild(script, args, options = {}) {
  const child = fork(script, args, {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ...options.env },
    execArgv: options.execArgv ?? [],
    ...(options.execPath ? { execPath: options.execPath } : {}),
  })
  children.add(child)
  child.once('exit', () => children.delete(child))
  const log = captureOutput(child)
  pin(child.pid, options.cpus)
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} ${args.join(' ')}: not ready in time\n${log()}`)),
      options.timeoutMs ?? 20_000,
    )
    child.on('message', function onMessage(message) {
      if (message?.type === 'ready') {
        clearTimeout(timer)
        child.off('message', onMessage)
        resolve(message)
      } else if (message?.type === 'skip' || message?.type === 'fatal') {
        clearTimeout(timer)
        child.off('message', onMessage)
        resolve(message)
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${script} ${args.join(' ')} exited (${code ?? signal}) before it was ready\n${log()}`))
    })
  })
  return { child, ready, log, request: (message) => ask(child, message), stop: () => stopChild(child) }
}

/** Spawns a foreign server (not one of ours) and waits until its port accepts connections. */
export async function startForeign(command, args, { cwd, port, cpus, env, timeoutMs = 30_000 }) {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  children.add(child)
  child.once('exit', () => children.delete(child))
  const log = captureOutput(child)
  pin(child.pid, cpus)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited (${child.exitCode})\n${log()}`)
    if (await canConnect(port)) break
    if (Date.now() > deadline) throw new Error(`${command}: port ${port} not open in time\n${log()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // Threads started after the first pin (the thread pool, the inspector) are caught by a second pass.
  pin(child.pid, cpus)
  return { child, log, stop: () => stopChild(child) }
}

/** Keeps the last few KB of a child's output for error messages; a pipe nobody reads would block the child. */
function captureOutput(child) {
  let tail = ''
  const keep = (chunk) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  return () => tail
}

let sequence = 0
/** One request/answer over IPC. @param {import('node:child_process').ChildProcess} child @param {Record<string, unknown>} message */
export function ask(child, message, timeoutMs = 120_000) {
  const id = ++sequence
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage)
      reject(new Error(`child did not answer ${message.type} in time`))
    }, timeoutMs)
    function onMessage(reply) {
      if (reply?.id !== id) return
      clearTimeout(timer)
      child.off('message', onMessage)
      if (reply.error) reject(new Error(reply.error))
      else resolve(reply)
    }
    child.on('message', onMessage)
    child.send({ ...message, id })
  })
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
  await exited
  clearTimeout(timer)
}

/** Whether a TCP server answers on 127.0.0.1:`port`. @param {number} port @returns {Promise<boolean>} */
export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Resident set size and its high-water mark in bytes, from procfs. @param {number} pid */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024
  return { rss: field('VmRSS'), hwm: field('VmHWM') }
}

/** Resets the kernel's peak-RSS counter of a process; false where the kernel does not allow it. @param {number} pid */
export function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

const TICKS_PER_SECOND = 100
/** CPU seconds a process has used (user + system), from procfs. @param {number} pid */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return Number.NaN
  }
}
