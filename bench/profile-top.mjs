#!/usr/bin/env node
// The functions with the most self time in V8 CPU profiles (`node --cpu-prof`), as the tables of
// bench/RESULTS.md show them: a function's share of the busy samples (the `(idle)` ones, the
// event loop waiting, are left out and counted apart), summed over the profiles given (the
// brokers of one cluster), grouped by name and file:line.
//
//   node bench/profile-top.mjs bench/.out/cluster-prof/*.cpuprofile [--top 30] [--by-file]
//
// --by-file sums the self time per source file instead (dist/ts/... or a node internal).
import fs from 'node:fs'
import path from 'node:path'

const args = process.argv.slice(2)
let top = 30
let byFile = false
const files = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i])
  else if (args[i] === '--by-file') byFile = true
  else files.push(args[i])
}
if (files.length === 0) {
  process.stderr.write('usage: node bench/profile-top.mjs <profile.cpuprofile>... [--top N] [--by-file]\n')
  process.exit(2)
}

const self = new Map()
let total = 0
let idle = 0
for (const file of files) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'))
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  // Each sample's time is the gap to the next one.
  const deltas = profile.timeDeltas
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i])
    const us = deltas[i + 1] ?? 0
    const { functionName, url, lineNumber } = node.callFrame
    const where = url ? path.relative(process.cwd(), url.replace(/^file:\/\//, '')) || url : ''
    if (functionName === '(idle)') {
      idle += us
      continue
    }
    const key = byFile ? where || `(${functionName || 'anonymous'})` : `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim()
    self.set(key, (self.get(key) ?? 0) + us)
    total += us
  }
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, top)
process.stdout.write(`| self % | self s | ${byFile ? 'file' : 'function'} |\n|---:|---:|---|\n`)
for (const [key, us] of rows) {
  process.stdout.write(`| ${((100 * us) / total).toFixed(1)} | ${(us / 1e6).toFixed(2)} | ${key.replaceAll('|', '\\|')} |\n`)
}
process.stdout.write(`\n${files.length} profile(s): ${(total / 1e6).toFixed(1)} s busy, ${(idle / 1e6).toFixed(1)} s idle\n`)
