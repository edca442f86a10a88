#!/usr/bin/env node
// Transactional produce next to Apache Kafka (issue #15): Kafka's Java producer
// (bench/java/TxnProducerPerf.java) sends BENCH_TXN_RECORDS records of 1 KiB to one partition in
// transactions of 100 records (beginTransaction, sends, commitTransaction; acks=all), to a
// single ferrolog broker and to a single-node Apache Kafka (tools/kafka/run-broker.sh), one after
// the other on this machine. Each system: one warm-up run of a tenth of the records, then
// BENCH_TXN_RUNS measured runs (median). Prints a markdown table: records/s, transactions/s, and
// ferrolog / Kafka.
//
//   npm run bench:transactions      (env: BENCH_TXN_RECORDS=100000 BENCH_TXN_RUNS=3 BENCH_TXN_SIZE=1024 BENCH_TXN_PER_TXN=100)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { root, run, startDaemon, freePort, waitForPort, exited, stopChild } from './lib/processes.mjs'
import { fetchJars, kafkaTools, KAFKA_NAME } from './lib/kafka-tools.mjs'
import { fmt, loadavg, machineInfo, makeSay, tail } from './lib/report.mjs'

const RECORDS = Number(process.env.BENCH_TXN_RECORDS ?? 100_000)
const RUNS = Number(process.env.BENCH_TXN_RUNS ?? 3)
const SIZE = Number(process.env.BENCH_TXN_SIZE ?? 1024)
const PER_TXN = Number(process.env.BENCH_TXN_PER_TXN ?? 100)
const mainJs = path.join(root, 'dist', 'ts', 'cli', 'main.js')
const perf = path.join(root, 'bench', 'java', 'TxnProducerPerf.java')
const say = makeSay('bench:transactions')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-bench-txn-'))

async function produce(jars, bootstrap, records, id) {
  const args = [`-Dlog4j2.configurationFile=${path.join(kafkaTools, 'log4j2-tools.properties')}`, '-cp', `${jars}/*`, perf, bootstrap, 'txn-bench', String(records), String(SIZE), String(PER_TXN), id]
  const r = await run('java', args, { timeoutMs: 30 * 60_000, label: 'TxnProducerPerf', echo: false })
  const m = /records=(\d+) transactions=(\d+) seconds=([\d.]+) records_per_sec=(\d+)/.exec(r.stdout)
  if (r.code !== 0 || !m) throw new Error(`TxnProducerPerf exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join(' / ')}`)
  return { rps: Number(m[4]), tps: Number(m[2]) / Number(m[3]) }
}

async function measure(jars, name, bootstrap) {
  await produce(jars, bootstrap, Math.max(PER_TXN, Math.floor(RECORDS / 10)), `${name}-warmup`)
  const runs = []
  for (let i = 0; i < RUNS; i++) {
    runs.push(await produce(jars, bootstrap, RECORDS, `${name}-${i}`))
    say(`${name} run ${i + 1}: ${fmt(runs.at(-1).rps)} records/s`)
  }
  runs.sort((a, b) => a.rps - b.rps)
  return runs[Math.floor(runs.length / 2)]
}

async function ferrolog(jars) {
  const port = await freePort()
  const logFile = path.join(tmp, 'ferrolog.log')
  const child = startDaemon(process.execPath, [mainJs, 'broker', '--data-dir', path.join(tmp, 'ferrolog'), '--listen', `127.0.0.1:${port}`], logFile)
  try {
    await waitForPort(port, 30_000, () => (exited(child) ? `the broker exited: ${tail(logFile, 3)}` : null))
    return await measure(jars, 'ferrolog', `127.0.0.1:${port}`)
  } finally {
    await stopChild(child, 'ferrolog', say)
  }
}

async function kafka(jars) {
  const dir = path.join(tmp, 'kafka')
  const r = await run(path.join(kafkaTools, 'run-broker.sh'), ['--data-dir', dir], { timeoutMs: 180_000, env: { KAFKA_JARS_DIR: jars }, label: 'run-broker.sh' })
  const bootstrap = /^bootstrap=(\S+)$/m.exec(r.stdout)?.[1]
  if (r.code !== 0 || !bootstrap) throw new Error(`run-broker.sh exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join(' / ')}`)
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
    `Transactional produce: Kafka's Java producer, ${fmt(RECORDS)} records of ${SIZE} B in transactions of ${PER_TXN}, acks=all, one partition; median of ${RUNS} runs after a warm-up`,
    `(${info.cpuModel}, ${info.cores} cores; ${info.node}; ${info.java}; commit ${info.commit}; load average at start ${load}, at end ${loadavg()})`,
    '',
    '| broker | records/s | transactions/s |',
    '|---|---:|---:|',
    `| ferrolog | ${fmt(f.rps)} | ${fmt(f.tps)} |`,
    `| ${KAFKA_NAME} | ${fmt(k.rps)} | ${fmt(k.tps)} |`,
    `| ferrolog / Kafka | ${fmt(f.rps / k.rps, 2)}x | ${fmt(f.tps / k.tps, 2)}x |`,
    '',
  ]
  process.stdout.write(lines.join('\n'))
}

main()
  .then(() => fs.rmSync(tmp, { recursive: true, force: true }))
  .catch((err) => {
    console.error(`bench:transactions failed: ${err.message} (logs kept in ${tmp})`)
    process.exitCode = 1
  })
