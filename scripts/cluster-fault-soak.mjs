#!/usr/bin/env node
// Cluster fault soak (issue #14): the mixed test of __test__/cluster/cluster-faults.test.ts with
// many rounds. A real etcd and three `ferrolog broker --cluster` processes, Kafka's Java
// producer (idempotent, acks=all, unique values) and a consumer group running throughout, and
// faults at random times: SIGKILL of a leader, SIGKILL and restart of a follower, SIGSTOP of a
// leader past its lease (with writes queued for it to find on resume), etcd killed and
// restarted, SIGTERM of a leader. Every CLUSTER_FAULT_PER_TOPIC rounds (--per-topic) the topic
// is read back and checked, the replicas' logs compared, and a new topic begins.
//
//   node scripts/cluster-fault-soak.mjs [--rounds N] [--faults leader-kill,follower-kill,...]
//                                       [--per-topic N] [--seed S] [--report FILE]
//
// Prints each round as it ends, then the totals: rounds by fault; records acknowledged, lost,
// duplicated; offsets reused; acknowledged records the group never consumed; sends that failed
// by exception class, and the errors the producer retried through by name; failover, first
// acknowledgement and recovery times per fault; what the fenced ex-leaders answered; every
// problem with its round. Exits 1 if any invariant broke. Needs dist/ (node scripts/build.mjs
// ts), etcd, Java, tools/kafka's jars. The cluster's directory (broker logs, data, the clients'
// files) is kept when something broke; FERROLOG_LOG_LEVEL=debug reaches the brokers.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

function parseArgs(argv) {
  const out = { rounds: 100, perTopic: 25, faults: null, seed: null, report: null }
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]]
    if (flag === '--rounds') out.rounds = Number(value)
    else if (flag === '--per-topic') out.perTopic = Number(value)
    else if (flag === '--faults') out.faults = value
    else if (flag === '--seed') out.seed = value
    else if (flag === '--report') out.report = value
    else {
      console.error(`unknown argument ${flag}`)
      process.exit(2)
    }
    i++
  }
  return out
}

function stats(xs) {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b)
  if (v.length === 0) return '-'
  const at = (q) => v[Math.min(v.length - 1, Math.floor(q * v.length))]
  return `n=${v.length} min ${v[0]} median ${at(0.5)} p95 ${at(0.95)} max ${v[v.length - 1]} ms`
}

function add(into, from) {
  for (const [k, n] of Object.entries(from ?? {})) into[k] = (into[k] ?? 0) + n
}

export function summarize(report) {
  const lines = []
  const rounds = report.segments.flatMap((s) => s.rounds)
  const byFault = {}
  for (const r of rounds) byFault[r.fault] = (byFault[r.fault] ?? 0) + 1
  const sum = (f) => report.segments.reduce((n, s) => n + f(s), 0)
  const failures = {}
  const retried = {}
  for (const s of report.segments) {
    add(failures, s.producerErrors)
    add(retried, s.producerRetried)
  }
  lines.push(`seed ${report.seed}; cluster directory ${report.root}`)
  lines.push(
    `rounds: ${rounds.length} (${Object.entries(byFault)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}) over ${report.segments.length} topics`,
  )
  lines.push(
    `acknowledged: ${sum((s) => s.report.acked)}; records in the logs: ${sum((s) => s.report.records)} (${sum((s) => s.report.unackedPresent)} not acknowledged: sends that failed or were cut off)`,
  )
  lines.push(
    `lost: ${sum((s) => s.report.lostCount)}; duplicates: ${sum((s) => s.report.duplicateCount)}; offsets reused: ${sum((s) => s.report.offsetsReused)}; group missed: ${sum((s) => s.report.groupMissed)}; replica divergences: ${sum((s) => s.replicaDivergence.length)}`,
  )
  lines.push(`sends failed (by exception): ${JSON.stringify(failures)}`)
  lines.push(`retried by the producer (client warnings, by error): ${JSON.stringify(retried)}`)
  lines.push(`group errors: ${sum((s) => s.groupErrors.length)}`)
  for (const fault of Object.keys(byFault)) {
    const rs = rounds.filter((r) => r.fault === fault)
    lines.push(`${fault}:`)
    lines.push(`  down (fault to restart/SIGCONT/etcd back) ${stats(rs.map((r) => r.downMs))}`)
    if (fault.startsWith('leader')) lines.push(`  failover (fault to new leaders in Metadata) ${stats(rs.map((r) => r.failoverMs))}`)
    lines.push(`  first ack on the victim's partitions after the fault ${stats(rs.map((r) => r.firstAckMs))}`)
    lines.push(`  longest time a partition had no ack ${stats(rs.map((r) => r.maxAckGapMs))}`)
    lines.push(`  undo to full ISR on every broker ${stats(rs.map((r) => r.recoveredMs))}`)
    if (fault === 'leader-term') lines.push(`  SIGTERM to exit ${stats(rs.map((r) => r.shutdownMs))}`)
  }
  const probes = rounds.flatMap((r) => r.staleProbes ?? [])
  if (probes.length) {
    const answers = {}
    for (const p of probes) answers[`acks=${p.acks} ${p.error}`] = (answers[`acks=${p.acks} ${p.error}`] ?? 0) + 1
    lines.push(`fenced ex-leaders' answers to queued writes: ${JSON.stringify(answers)}`)
  }
  const problems = report.segments.flatMap((s) => [
    ...s.rounds.flatMap((r) => r.problems.map((p) => `${s.topic} round ${r.round} (${r.fault} of broker ${r.victim ?? '-'}, ${new Date(r.faultAt || r.startedAt).toISOString()}): ${p}`)),
    ...s.problems.map((p) => `${s.topic}: ${p}`),
  ])
  lines.push(`problems: ${problems.length}`)
  for (const p of problems.slice(0, 50)) lines.push(`  ${p}`)
  if (problems.length > 50) lines.push(`  ... ${problems.length - 50} more in the report`)
  return { text: lines.join('\n'), problems }
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const report = args.report ?? join(mkdtempSync(join(tmpdir(), 'ferrolog-soak-')), 'report.json')
  const env = {
    ...process.env,
    CLUSTER_FAULT_SOAK_ROUNDS: String(args.rounds),
    CLUSTER_FAULT_PER_TOPIC: String(args.perTopic),
    CLUSTER_FAULT_REPORT: report,
  }
  if (args.faults) env.CLUSTER_FAULT_FAULTS = args.faults
  if (args.seed) env.CLUSTER_FAULT_SEED = args.seed
  const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
  const started = Date.now()
  const child = spawn(process.execPath, [vitest, 'run', '__test__/cluster/cluster-faults.test.ts', '-t', 'faults mixed at random'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  // The rounds as they end; vitest's own output only in the log kept beside the report.
  const { createWriteStream } = await import('node:fs')
  const log = createWriteStream(`${report}.vitest.log`)
  for (const stream of [child.stdout, child.stderr]) {
    let partial = ''
    stream.on('data', (d) => {
      log.write(d)
      const lines = (partial + d.toString()).split('\n')
      partial = lines.pop()
      for (const l of lines) if (/^\[[a-z,-]+\] (round|seed|faults-)/.test(l)) console.log(l)
    })
  }
  const code = await new Promise((resolve) => child.on('close', resolve))
  log.end()
  console.log(`\nsoak: ${Math.round((Date.now() - started) / 1000)} s, vitest exit ${code}; report ${report}, vitest output ${report}.vitest.log`)
  if (!existsSync(report)) {
    console.log('no report written: the run stopped before its first topic was checked (see the vitest output)')
    process.exit(1)
  }
  const { text, problems } = summarize(JSON.parse(readFileSync(report, 'utf8')))
  console.log(text)
  process.exit(code === 0 && problems.length === 0 ? 0 : 1)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
