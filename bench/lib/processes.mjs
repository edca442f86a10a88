// The child processes of the benches in bench/ (brokers, etcd, Kafka's tools): running one to its
// end, starting a long-running one, waiting for its port and its exit, stopping it, its CPU time,
// and the CPU it runs on. Every child that run() or startDaemon() starts is in `children` until it
// ends, for the bench's cleanup; after abort() (SIGINT/SIGTERM) run() starts nothing more.
// Nothing runs at import: the bench/footprint.mjs child that measures an import loads this too.
import { spawn, spawnSync, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root: children run there. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Every child process still running that run() or startDaemon() started. */
export const children = new Set()

let aborting = false
/** From now on run() starts nothing (but with evenIfAborting): the bench is being interrupted. */
export function abort() {
  aborting = true
}
export const isAborting = () => aborting

/**
 * Runs a command to its end (or kills it at timeoutMs, which has no default); its output is echoed
 * to stderr line by line as `    label | line`. watch: polled every 500 ms, returns why to give up
 * (a broker died) or null. After abort() only commands with evenIfAborting run. doneWhen(stdout):
 * once it holds, the command gets graceMs to end by itself, then is killed (cutShort in the result).
 */
export function run(cmd, args, { timeoutMs, env, label = path.basename(cmd), echo = true, watch, evenIfAborting = false, doneWhen, graceMs = 5000 } = {}) {
  if (!Number.isFinite(timeoutMs)) throw new Error(`run ${label}: timeoutMs is not a number: ${timeoutMs}`)
  return new Promise((resolve, reject) => {
    if (aborting && !evenIfAborting) return reject(new Error('interrupted'))
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    let stdout = ''
    let stderr = ''
    // Echo whole lines only (a chunk may end in the middle of one).
    const pending = { out: '', err: '' }
    const relay = (which, chunk, flush = false) => {
      if (!echo) return
      const lines = (pending[which] + chunk).split('\n')
      pending[which] = flush ? '' : lines.pop()
      for (const line of lines) if (line.trim()) process.stderr.write(`    ${label} | ${line}\n`)
    }
    let cutShort = false
    let grace = null
    child.stdout.on('data', (c) => {
      stdout += c
      relay('out', c)
      if (doneWhen && !grace && doneWhen(stdout)) grace = setTimeout(() => ((cutShort = true), child.kill('SIGKILL')), graceMs)
    })
    child.stderr.on('data', (c) => ((stderr += c), relay('err', c)))
    child.stdout.on('end', () => relay('out', '', true))
    child.stderr.on('end', () => relay('err', '', true))
    let timedOut = false
    let gaveUp = null
    const timer = setTimeout(() => ((timedOut = true), child.kill('SIGKILL')), timeoutMs)
    const poll =
      watch &&
      setInterval(() => {
        gaveUp = watch()
        if (gaveUp) {
          clearInterval(poll)
          child.kill('SIGKILL')
        }
      }, 500)
    const done = () => (clearTimeout(timer), clearTimeout(grace), poll && clearInterval(poll), children.delete(child))
    child.on('error', (err) => (done(), reject(err)))
    child.on('close', (code, signal) => {
      done()
      if (gaveUp) reject(new Error(`${label} stopped: ${gaveUp}`))
      else if (timedOut) reject(new Error(`${label}: no end after ${timeoutMs / 1000}s, killed`))
      else resolve({ code, signal, stdout, stderr, cutShort })
    })
  })
}

/** A long-running child (a broker, etcd) with its output in logFile. */
export function startDaemon(cmd, args, logFile, env) {
  const fd = fs.openSync(logFile, 'a')
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] })
  fs.closeSync(fd)
  children.add(child)
  child.on('exit', () => children.delete(child))
  return child
}

export const exited = (child) => child.exitCode !== null || child.signalCode !== null

/** Resolves true once the child has exited, false after timeoutMs. */
export function waitForExit(child, timeoutMs) {
  if (exited(child)) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs)
    child.once('exit', () => (clearTimeout(timer), resolve(true)))
  })
}

/** SIGTERM, then SIGKILL after graceMs (said with say); resolves once the child is gone. */
export async function stopChild(child, name, say, graceMs = 60_000) {
  if (exited(child)) return
  child.kill('SIGTERM')
  if (!(await waitForExit(child, graceMs))) {
    say(`${name} still running ${graceMs / 1000}s after SIGTERM: SIGKILL`)
    child.kill('SIGKILL')
    await waitForExit(child, 10_000)
  }
}

/** Whether a process of that pid exists (signal 0). */
export function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------------
// ports

/** A free port on 127.0.0.1: bound, then released. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** n distinct free ports: all bound at once, then released. */
export async function freePorts(n) {
  const servers = []
  try {
    for (let i = 0; i < n; i++) {
      const server = net.createServer()
      await new Promise((resolve, reject) => (server.once('error', reject), server.listen(0, '127.0.0.1', resolve)))
      servers.push(server)
    }
    return servers.map((s) => s.address().port)
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  }
}

/**
 * Tries a connection to 127.0.0.1:port every 100 ms until one opens; deadReason() (why the
 * process that should listen is gone, or null) is asked after each refusal and thrown.
 */
export async function waitForPort(port, timeoutMs, deadReason) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port })
      socket.once('connect', () => (socket.destroy(), resolve(true)))
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    const dead = deadReason()
    if (dead) throw new Error(dead)
    if (Date.now() > deadline) throw new Error(`nothing accepts connections on 127.0.0.1:${port} after ${timeoutMs / 1000}s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

// ---------------------------------------------------------------------------------------------
// CPU time and placement

let clockTicks = 0
const clkTck = () => (clockTicks ||= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100)

/** utime and stime of a process (all its threads) in seconds; `who` names the pid in the error. */
export function cpuTimes(pid, who = 'pid') {
  let stat
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    throw new Error(`${who} ${pid} is gone (no /proc/${pid}/stat)`)
  }
  // The command name (field 2) may hold spaces: split after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  return { user: Number(fields[11]) / clkTck(), sys: Number(fields[12]) / clkTck() }
}

/** utime + stime of a process (all its threads) in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid, who = 'pid') {
  const { user, sys } = cpuTimes(pid, who)
  return user + sys
}

// Placement (BENCH_PIN, default 1 where taskset exists and there are two CPUs or more): every
// thread of the brokers runs on BROKER_CPU, the tools' JVMs on TOOLS_CPU.
export const BROKER_CPU = '0'
export const TOOLS_CPU = '1'
let pinning = null
/** Whether brokers and tools are pinned to their CPUs (BENCH_PIN, taskset, two CPUs or more). */
export const pinned = () => (pinning ??= process.env.BENCH_PIN !== '0' && os.cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0)

/** Moves every thread of a process (those it starts later inherit it) to BROKER_CPU, when pinned. */
export function pin(pid) {
  if (!pinned()) return
  const r = spawnSync('taskset', ['-a', '-p', '-c', BROKER_CPU, String(pid)], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`taskset -a -p -c ${BROKER_CPU} ${pid} failed: ${r.stderr.trim()}`)
}
