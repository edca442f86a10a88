// Apache Kafka's own tools as the benches in bench/ run them: a tool's main class from the jars
// that tools/kafka/fetch-jars.sh copies from Maven Central, in a JVM of its own (on TOOLS_CPU when
// the bench pins), and the summary ProducerPerformance prints.
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { root, run, pinned, TOOLS_CPU } from './processes.mjs'
import { lastLines } from './report.mjs'

/** The Kafka whose jars tools/kafka/pom.xml names. */
export const KAFKA_NAME = 'Apache Kafka 4.4.0'

/** tools/kafka: fetch-jars.sh, run-broker.sh, run-cluster.sh and their stop scripts. */
export const kafkaTools = path.join(root, 'tools', 'kafka')

/** The directory of Kafka's jars, filled by tools/kafka/fetch-jars.sh first when needed (its Maven chatter on stderr). */
export function fetchJars() {
  return execFileSync(path.join(kafkaTools, 'fetch-jars.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 }).trim()
}

/** Runs mainClass of the jars in `jars` (fetch-jars.sh's directory) to its end, as run() does. */
export function java(jars, mainClass, args, opts) {
  const jvm = ['-Xmx512m', `-Dlog4j2.configurationFile=${path.join(kafkaTools, 'log4j2-tools.properties')}`, '-cp', `${jars}/*`, mainClass, ...args]
  return pinned() ? run('taskset', ['-c', TOOLS_CPU, 'java', ...jvm], { label: 'java', ...opts }) : run('java', jvm, { label: 'java', ...opts })
}

// e.g. "1048576 records sent, 61500.3 records/sec (60.06 MB/sec), 480.12 ms avg latency, 901.00 ms max latency, 471 ms 50th, 811 ms 95th, 868 ms 99th, 893 ms 99.9th."
const PRODUCER_SUMMARY = /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th/m

/**
 * The summary line of a ProducerPerformance run (run()'s result) that was to send `records`:
 * records/s and MB/s as numbers, the latencies (ms) as the tool prints them; problems: the first
 * three exceptions on its stderr, after a count of records sent other than `records`. Throws when
 * the tool failed or printed no summary.
 */
export function producerSummary(r, records) {
  const m = PRODUCER_SUMMARY.exec(r.stdout)
  if (r.code !== 0 || !m) throw new Error(`ProducerPerformance exited ${r.code} without its summary: ${lastLines(r.stderr || r.stdout)}`)
  const problems = (r.stderr.match(/Exception[^\n]*/g) ?? []).slice(0, 3)
  if (Number(m[1]) !== records) problems.unshift(`${m[1]} records sent, ${records} wanted`)
  return { rps: Number(m[2]), mbps: Number(m[3]), avgMs: m[4], maxMs: m[5], p50Ms: m[6], p95Ms: m[7], p99Ms: m[8], problems }
}
