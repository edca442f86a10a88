#!/usr/bin/env node
// SIGKILL during log cleaning, many times: a child appends and runs Log.clean rounds
// (__test__/storage/cleaner-crash-child.cjs) and is killed after a random delay; a second child
// reopens the log and checks that every key's latest acknowledged value is there, offsets
// increase, and no .cleaned/.swap/.deleted file is left. Uses dist/ (node scripts/build.mjs ts).
//   node scripts/cleaner-crash-soak.mjs [--rounds N] [--backend native|js|both] [--seed S]
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const CHILD = new URL('../__test__/storage/cleaner-crash-child.cjs', import.meta.url).pathname

export function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Runs the appending child, kills it `delayMs` after its first line; the last acknowledged offset and the rounds it finished. */
export function runAndKill(dataDir, backend, delayMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, 'run', dataDir, backend], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let timer
    const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.stdout.on('data', (chunk) => {
      out += chunk
      timer ??= setTimeout(() => child.kill('SIGKILL'), delayMs)
    })
    child.stderr.on('data', (chunk) => (err += chunk))
    child.on('exit', (code, signal) => {
      clearTimeout(deadline)
      clearTimeout(timer)
      if (signal !== 'SIGKILL') return reject(new Error(`child exited with ${code}: ${err}`))
      const lines = out.split('\n')
      const acks = lines.filter((l) => /^\d+$/.test(l))
      resolve({
        lastAcked: acks.length > 0 ? BigInt(acks.at(-1)) : -1n,
        cleaned: lines.filter((l) => l.startsWith('c ') && l.endsWith('false')).length,
        aborted: lines.filter((l) => l.startsWith('c ') && l.endsWith('true')).length,
      })
    })
  })
}

export function verify(dataDir, backend, lastAcked) {
  const out = execFileSync(process.execPath, [CHILD, 'verify', dataDir, backend, String(lastAcked)], { encoding: 'utf8' })
  return JSON.parse(out.trim().split('\n').at(-1))
}

/** `rounds` kills on one data directory; returns the figures and every problem found. */
export async function soak(backend, rounds, seed) {
  const dataDir = mkdtempSync(join(tmpdir(), `cleaner-soak-${backend}-`))
  const random = prng(seed)
  const figures = { backend, rounds, cleaned: 0, aborted: 0, swapRecoveries: 0, lastAcked: -1n, records: 0, segments: 0, problems: [] }
  try {
    for (let i = 0; i < rounds; i++) {
      const { lastAcked, cleaned, aborted } = await runAndKill(dataDir, backend, 20 + Math.floor(random() * 600))
      if (lastAcked > figures.lastAcked) figures.lastAcked = lastAcked
      figures.cleaned += cleaned
      figures.aborted += aborted
      const v = verify(dataDir, backend, figures.lastAcked)
      figures.records = v.records
      figures.segments = v.segments
      if (v.recovered > 0) figures.swapRecoveries++
      for (const p of v.problems) figures.problems.push(`kill ${i}: ${p}`)
      if (figures.problems.length > 0) break
    }
  } finally {
    if (figures.problems.length === 0) rmSync(dataDir, { recursive: true, force: true })
    else figures.dataDir = dataDir
  }
  return figures
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`)
    return i < 0 ? fallback : process.argv[i + 1]
  }
  const rounds = Number(arg('rounds', '100'))
  const backend = arg('backend', 'both')
  const seed = Number(arg('seed', '1'))
  let failed = false
  for (const b of backend === 'both' ? ['native', 'js'] : [backend]) {
    const started = Date.now()
    const f = await soak(b, rounds, seed)
    console.log(
      `${b}: ${f.rounds} kills, ${f.cleaned} rounds swapped in, ${f.aborted} abandoned, ${f.swapRecoveries} opens that recovered a cleaning, ` +
        `last acknowledged offset ${f.lastAcked}, ${f.records} records in ${f.segments} segments at the end, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    )
    for (const p of f.problems) console.log(`  PROBLEM ${p}`)
    if (f.problems.length > 0) {
      console.log(`  data kept in ${f.dataDir}`)
      failed = true
    }
  }
  process.exit(failed ? 1 : 0)
}
