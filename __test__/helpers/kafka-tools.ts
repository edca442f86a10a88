/**
 * Apache Kafka's own command-line tools (the jars of tools/kafka/.jars, see fetch-jars.sh), run
 * against a broker the test started, by their main classes.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { runProcess, type RunResult } from './process.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const JARS = join(KAFKA, '.jars')

export const KafkaTool = {
  TOPICS: 'org.apache.kafka.tools.TopicCommand',
  CONFIGS: 'org.apache.kafka.tools.ConfigCommand',
  LOG_DIRS: 'org.apache.kafka.tools.LogDirsCommand',
  CLUSTER: 'org.apache.kafka.tools.ClusterTool',
  CONSUMER_GROUPS: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
} as const

/** Copies the jars from Maven Central the first time (cached after); .ci/run fetches them too. */
export function fetchKafkaJars(): void {
  execFileSync('bash', [join(KAFKA, 'fetch-jars.sh')], { stdio: 'ignore' })
}

/**
 * Runs a tool's main class with `--bootstrap-server` pointing at `port`, after its subcommand
 * when it has one (`cluster-id ...`: the arguments before the first option).
 */
export function runKafkaTool(port: number, mainClass: string, args: string[], input = ''): Promise<RunResult> {
  const sub = args.findIndex((a) => a.startsWith('-'))
  const at = sub < 0 ? args.length : sub
  const toolArgs = [...args.slice(0, at), '--bootstrap-server', `127.0.0.1:${port}`, ...args.slice(at)]
  const command = [`-Dlog4j2.configurationFile=${join(KAFKA, 'log4j2-tools.properties')}`, '-cp', `${JARS}/*`, mainClass, ...toolArgs]
  return runProcess('java', command, input, 60_000)
}

/** Like runKafkaTool, and its stdout; throws when the tool failed or printed an error. */
export async function kafkaToolOk(port: number, mainClass: string, args: string[], input = ''): Promise<string> {
  const r = await runKafkaTool(port, mainClass, args, input)
  if (r.status !== 0 || /Error while executing/.test(r.stdout + r.stderr)) throw new Error(`${mainClass} ${args.join(' ')}: ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/**
 * Starts (or restarts, on the same data dir and ports) a real Apache Kafka broker with
 * tools/kafka/run-broker.sh; its stdout, whose `bootstrap=127.0.0.1:PORT` names the listener.
 */
export async function runKafkaBroker(dataDir: string, args: string[] = []): Promise<string> {
  const out = await runProcess('bash', [join(KAFKA, 'run-broker.sh'), '--data-dir', dataDir, ...args], '', 120_000)
  if (out.status !== 0) throw new Error(`run-broker.sh: ${out.stdout}\n${out.stderr}`)
  return out.stdout
}

/** The port in run-broker.sh's `bootstrap=127.0.0.1:PORT`. */
export function kafkaBrokerPort(runOutput: string): number {
  return Number(/bootstrap=127\.0\.0\.1:(\d+)/.exec(runOutput)![1])
}

/** Stops a broker runKafkaBroker started (SIGTERM, a clean shutdown; stop-broker.sh). */
export function stopKafkaBroker(dataDir: string): void {
  execFileSync('bash', [join(KAFKA, 'stop-broker.sh'), dataDir], { stdio: 'ignore' })
}
