#!/usr/bin/env node
// Rebalance time (issue 27): Kafka's Java consumer (bench/java/RebalanceTime.java), a member
// joining a group of BENCH_REBALANCE_MEMBERS consumers over one topic of
// BENCH_REBALANCE_PARTITIONS partitions while a producer writes to every partition: the time until
// every partition is consumed again (a record sent after the join consumed from each, and the new
// member owning partitions). The classic protocol (the Java client's default assignors: range, an
// eager rebalance) and KIP-848's consumer protocol (the broker's uniform assignor), on a single
// ferrolog broker and on a single-node Apache Kafka (tools/kafka/run-broker.sh), one after the
// other; BENCH_REBALANCE_JOINS joins each (median). Both brokers with
// group.initial.rebalance.delay.ms=0; brokers and the Java clients pinned as bench:kafka pins them
// (BENCH_PIN). A loaded machine skews this bench against ferrolog: one event loop gets a thread's
// share of a contended CPU, Kafka's dozens of threads many shares. Prints a markdown table.
//
//   npm run bench:rebalance      (env: BENCH_REBALANCE_MEMBERS=20 BENCH_REBALANCE_PARTITIONS=200 BENCH_REBALANCE_JOINS=3)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { root, run, startDaemon, freePort, waitForPort, exited, stopChild, pin, pinned, BROKER_CPU, TOOLS_CPU } from './lib/processes.mjs'
import { fetchJars, java, kafkaTools, KAFKA_NAME } from './lib/kafka-tools.mjs'
import { fmt, loadavg, machineInfo, makeSay, tail } from './lib/report.mjs'

const MEMBERS = Number(process.env.BENCH_REBALANCE_MEMBERS ?? 20)
const PARTITIONS = Number(process.env.BENCH_REBALANCE_PARTITIONS ?? 200)
const JOINS = Number(process.env.BENCH_REBALANCE_JOINS ?? 3)
const PROTOCOLS = ['classic', 'consumer']
const mainJs = path.join(root, 'dist', 'ts', 'cli', 'main.js')
const program = path.join(root, 'bench', 'java', 'RebalanceTime.java')
const say = makeSay('bench:rebalance')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-bench-rebalance-'))

/** Each protocol's median seconds over JOINS joins, on the broker at `bootstrap`. */
async function measure(jars, name, bootstrap) {
  const medians = {}
  for (const protocol of PROTOCOLS) {
    const topic = `rebalance-${protocol}`
    const created = await java(
      jars,
      'org.apache.kafka.tools.TopicCommand',
      ['--bootstrap-server', bootstrap, '--create', '--topic', topic, '--partitions', String(PARTITIONS), '--replication-factor', '1'],
      {
        timeoutMs: 120_000,
        label: 'kafka-topics',
        echo: false,
      },
    )
    if (created.code !== 0) throw new Error(`kafka-topics --create ${topic} on ${name}: ${created.stderr.trim().split('\n').slice(-3).join(' / ')}`)
    const args = [
      `-Dlog4j2.configurationFile=${path.join(kafkaTools, 'log4j2-tools.properties')}`,
      '-cp',
      `${jars}/*`,
      program,
      bootstrap,
      topic,
      String(PARTITIONS),
      String(MEMBERS),
      protocol,
      String(JOINS),
    ]
    const opts = { timeoutMs: 20 * 60_000, label: 'RebalanceTime', echo: false }
    const r = pinned() ? await run('taskset', ['-c', TOOLS_CPU, 'java', ...args], opts) : await run('java', args, opts)
    for (const line of r.stdout.trim().split('\n')) say(`${name} ${protocol}: ${line}`)
    const m = /^median_seconds=([\d.]+)$/m.exec(r.stdout)
    if (r.code !== 0 || !m) throw new Error(`RebalanceTime on ${name} (${protocol}) exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join(' / ')}`)
    medians[protocol] = Number(m[1])
  }
  return medians
}

async function ferrolog(jars) {
  const port = await freePort()
  const logFile = path.join(tmp, 'ferrolog.log')
  const config = path.join(tmp, 'ferrolog.properties')
  fs.writeFileSync(config, 'group.initial.rebalance.delay.ms=0\n')
  const child = startDaemon(process.execPath, [mainJs, 'broker', '--data-dir', path.join(tmp, 'ferrolog'), '--listen', `127.0.0.1:${port}`, '--config', config], logFile)
  try {
    await waitForPort(port, 30_000, () => (exited(child) ? `the broker exited: ${tail(logFile, 3)}` : null))
    pin(child.pid)
    return await measure(jars, 'ferrolog', `127.0.0.1:${port}`)
  } finally {
    await stopChild(child, 'ferrolog', say)
  }
}

async function kafka(jars) {
  const dir = path.join(tmp, 'kafka')
  // run-broker.sh sets group.initial.rebalance.delay.ms=0.
  const r = await run(path.join(kafkaTools, 'run-broker.sh'), ['--data-dir', dir], { timeoutMs: 180_000, env: { KAFKA_JARS_DIR: jars }, label: 'run-broker.sh' })
  const bootstrap = /^bootstrap=(\S+)$/m.exec(r.stdout)?.[1]
  if (r.code !== 0 || !bootstrap) throw new Error(`run-broker.sh exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join(' / ')}`)
  pin(Number(/^pid=(\d+)$/m.exec(r.stdout)?.[1]))
  try {
    return await measure(jars, 'kafka', bootstrap)
  } finally {
    await run(path.join(kafkaTools, 'stop-broker.sh'), [dir, '--timeout', '60'], { timeoutMs: 90_000, label: 'stop-broker.sh' })
  }
}

async function main() {
  const jars = fetchJars()
  const info = machineInfo(mainJs)
  const load = loadavg()
  const f = await ferrolog(jars)
  const k = await kafka(jars)
  const lines = [
    `Rebalance time: a member joins ${MEMBERS} Java consumers over ${PARTITIONS} partitions under a producer; seconds until every partition is consumed again, median of ${JOINS} joins`,
    `(${info.cpuModel}, ${info.cores} cores; ${info.node}; ${info.java}; commit ${info.commit}; load average at start ${load}, at end ${loadavg()})`,
    '',
    '| group protocol | ferrolog s | Kafka s | ferrolog / Kafka |',
    '|---|---:|---:|---:|',
    ...PROTOCOLS.map((p) => `| ${p === 'classic' ? 'classic (range, eager)' : 'consumer (KIP-848, uniform)'} | ${fmt(f[p], 2)} | ${fmt(k[p], 2)} | ${fmt(f[p] / k[p], 2)}x |`),
    '',
    `(${KAFKA_NAME}; both single brokers with group.initial.rebalance.delay.ms=0; ${pinned() ? `brokers on CPU ${BROKER_CPU}, the Java clients on CPU ${TOOLS_CPU}` : 'not pinned'})`,
    '',
  ]
  process.stdout.write(lines.join('\n'))
}

main()
  .then(() => fs.rmSync(tmp, { recursive: true, force: true }))
  .catch((err) => {
    console.error(`bench:rebalance failed: ${err.message} (logs kept in ${tmp})`)
    process.exitCode = 1
  })
