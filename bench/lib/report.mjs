// What the benches in bench/ say and write: progress lines on stderr, numbers formatted for the
// tables, the machine and the command a table was made on, and the ends and the warnings of logs.
// Nothing runs at import (the bench/footprint.mjs child that measures an import loads this too).
import { spawnSync, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** say(msg) writes `[name +Ns] msg` to stderr, N the seconds since makeSay was called. */
export function makeSay(name) {
  const t0 = Date.now()
  return (msg) => process.stderr.write(`[${name} +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}\n`)
}

/** A number with d decimals and thousands separators, or '-'. */
export const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '-')

/** The 1, 5 and 15 minute load averages, 2 decimals each. */
export const loadavg = (separator = ', ') =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(separator)

/** The last lines of a file joined by ' / ' (for an error message), or '(no log)'. */
export function tail(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join(' / ')
  } catch {
    return '(no log)'
  }
}

/** The last n lines of a text joined by ' / ' (a tool's output in an error message). */
export const lastLines = (text, n = 6) => text.trim().split('\n').slice(-n).join(' / ')

/**
 * Counts the warnings and errors in a log (ferrolog and etcd: JSON lines; Kafka: log4j lines):
 * `W warnings, E errors<suffix>`, then the first `examples` of them, each cut to `width`
 * characters, in backticks (and with `|` escaped for a Markdown table when escapePipes).
 */
export function logProblems(file, { examples = 3, width = 300, escapePipes = false, suffix = '' } = {}) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch {
    return 'no log'
  }
  const counts = { warn: 0, error: 0 }
  const first = []
  for (const line of text.split('\n')) {
    const level = /"level":"(warn|error)"/.exec(line)?.[1] ?? /^\[[^\]]*\] (WARN|ERROR) /.exec(line)?.[1]?.toLowerCase()
    if (!level) continue
    counts[level]++
    if (first.length < examples) first.push(line.slice(0, width))
  }
  const quote = (l) => {
    const q = l.replace(/`/g, "'")
    return `\`${escapePipes ? q.replace(/\|/g, '\\|') : q}\``
  }
  return `${counts.warn} warnings, ${counts.error} errors${suffix}` + (first.length ? ` (first: ${first.map(quote).join('; ')})` : '')
}

/**
 * The machine a table was made on: CPU, cores, memory, kernel, Node, Java (and etcd when asked),
 * and the commit with the time mainJs (ferrolog's CLI in dist/) was built.
 */
export function machineInfo(mainJs, { etcd = false } = {}) {
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model
  const javaVersion = spawnSync('java', ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0]
  const etcdVersion = etcd ? { etcd: spawnSync('etcd', ['--version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? 'etcd ?' } : {}
  let commit = ''
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
    if (execFileSync('git', ['status', '--porcelain', '--', 'ts', 'crates'], { cwd: root, encoding: 'utf8' }).trim()) commit += ' (ts/ or crates/ modified)'
  } catch {}
  commit += `, dist/ts/cli/main.js built ${fs.statSync(mainJs).mtime.toISOString()}`
  return { cpuModel, cores: os.cpus().length, memGiB: (os.totalmem() / 2 ** 30).toFixed(0), node: process.version, java: javaVersion, ...etcdVersion, kernel: os.release(), commit }
}

/** The command that ran this bench: the variables of envNames that are set, then `npm run npmScript` or `node script`. */
export function commandLine(envNames, npmScript, script) {
  const env = envNames.filter((k) => process.env[k] !== undefined).map((k) => `${k}=${process.env[k]}`)
  const cmd = process.env.npm_lifecycle_event === npmScript ? `npm run ${npmScript}` : `node ${script}`
  return [...env, cmd].join(' ')
}
