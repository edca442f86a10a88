/**
 * Apache Kafka's own command-line tools (the jars of tools/kafka/.jars, see fetch-jars.sh), run
 * against a broker the test started, by their main classes.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { CertificateAuthority } from '../../ts/security/certificates.js'
import { JARS, KAFKA_TOOLS, SHORT_JVM } from './java.js'
import { runProcess, type RunResult } from './process.js'

export const KafkaTool = {
  TOPICS: 'org.apache.kafka.tools.TopicCommand',
  CONFIGS: 'org.apache.kafka.tools.ConfigCommand',
  LOG_DIRS: 'org.apache.kafka.tools.LogDirsCommand',
  CLUSTER: 'org.apache.kafka.tools.ClusterTool',
  CONSUMER_GROUPS: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  ACLS: 'org.apache.kafka.tools.AclCommand',
  SHARE_GROUPS: 'org.apache.kafka.tools.consumer.group.ShareGroupCommand',
  CONSOLE_PRODUCER: 'org.apache.kafka.tools.ConsoleProducer',
  CONSOLE_SHARE_CONSUMER: 'org.apache.kafka.tools.consumer.ConsoleShareConsumer',
} as const

/** Copies the jars from Maven Central the first time (cached after); .ci/run fetches them too. */
export function fetchKafkaJars(): void {
  execFileSync('bash', [join(KAFKA_TOOLS, 'fetch-jars.sh')], { stdio: 'ignore' })
}

/**
 * Runs a tool's main class with `--bootstrap-server` pointing at `port`, after its subcommand
 * when it has one (`cluster-id ...`: the arguments before the first option).
 */
export function runKafkaTool(port: number, mainClass: string, args: string[], input = ''): Promise<RunResult> {
  const sub = args.findIndex((a) => a.startsWith('-'))
  const at = sub < 0 ? args.length : sub
  return runKafkaClass(mainClass, [...args.slice(0, at), '--bootstrap-server', `127.0.0.1:${port}`, ...args.slice(at)], input)
}

/** Runs one of Kafka's classes (a tool, DumpLogSegments) with `args` as given, as the tools run. */
export function runKafkaClass(mainClass: string, args: string[], input = '', timeoutMs = 60_000): Promise<RunResult> {
  const archive = toolClassArchive()
  const command = [...TOOL_JVM, ...archive.options, '-cp', `${JARS}/*`, mainClass, ...args]
  return runProcess('java', command, input, timeoutMs).finally(archive.done)
}

/**
 * A tool's JVM lives a few seconds (java.ts's SHORT_JVM), and the JVM's own warnings go to stderr
 * (never mixed into the stdout a test reads), the class-data archive's aside: the run that makes
 * the archive warns of every class it cannot archive, which would make that one run's stderr differ.
 */
const TOOL_JVM = [...SHORT_JVM, '-Xlog:disable', '-Xlog:all=warning,cds*=off:stderr']

/**
 * The tools' classes in a class-data archive (Java's AppCDS), made by the first tool run of this
 * set of jars and kept in ~/.cache/ferrolog: `kafka-configs --describe` then costs about 0.5
 * CPU-seconds instead of 1.8. The archive is named by the jars (names, sizes, times), so new jars
 * make a new one; a JVM that cannot use it (another Java) warns and loads the classes as usual.
 * One run at a time makes it (an exclusive lock file); the others meanwhile run without it.
 */
function toolClassArchive(): { options: string[]; done: () => void } {
  const dir = join(homedir(), '.cache', 'ferrolog')
  const hash = createHash('sha256')
  for (const name of readdirSync(JARS).sort()) {
    const st = statSync(join(JARS, name))
    hash.update(`${name}:${st.size}:${st.mtimeMs}\n`)
  }
  const archive = join(dir, `kafka-tools-${hash.digest('hex').slice(0, 16)}.jsa`)
  if (existsSync(archive)) return { options: [`-XX:SharedArchiveFile=${archive}`], done: () => {} }
  mkdirSync(dir, { recursive: true })
  const lock = `${archive}.lock`
  try {
    if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 10 * 60_000) rmSync(lock, { force: true }) // left by a killed run
    closeSync(openSync(lock, 'wx'))
  } catch {
    return { options: [], done: () => {} } // another run is making it
  }
  const partial = `${archive}.${process.pid}.tmp`
  return {
    options: [`-XX:ArchiveClassesAtExit=${partial}`],
    done: () => {
      if (existsSync(partial)) renameSync(partial, archive)
      rmSync(lock, { force: true })
    },
  }
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
  const out = await runProcess('bash', [join(KAFKA_TOOLS, 'run-broker.sh'), '--data-dir', dataDir, ...args], '', 120_000)
  if (out.status !== 0) throw new Error(`run-broker.sh: ${out.stdout}\n${out.stderr}`)
  return out.stdout
}

/** The port in run-broker.sh's `bootstrap=127.0.0.1:PORT`. */
export function kafkaBrokerPort(runOutput: string): number {
  return Number(/bootstrap=127\.0\.0\.1:(\d+)/.exec(runOutput)![1])
}

/** Stops a broker runKafkaBroker started (SIGTERM, a clean shutdown; stop-broker.sh). */
export function stopKafkaBroker(dataDir: string): void {
  execFileSync('bash', [join(KAFKA_TOOLS, 'stop-broker.sh'), dataDir], { stdio: 'ignore' })
}

/** An Apache Kafka KRaft cluster of combined nodes (tools/kafka/run-cluster.sh), ids 1..N. */
export interface KafkaCluster {
  dir: string
  bootstrap: string
  /** Each node's client port, by node id. */
  ports: Map<number, number>
}

/** Starts a cluster of `nodes` combined broker+controller nodes under `dir` (run-cluster.sh). */
export async function startKafkaCluster(dir: string, nodes = 3, sets: Record<string, string> = {}): Promise<KafkaCluster> {
  const args = [join(KAFKA_TOOLS, 'run-cluster.sh'), '--data-dir', dir, '--nodes', String(nodes), ...Object.entries(sets).flatMap(([k, v]) => ['--set', `${k}=${v}`])]
  const out = await runProcess('bash', args, '', 240_000)
  if (out.status !== 0) throw new Error(`run-cluster.sh: ${out.stdout}\n${out.stderr}`)
  const ports = new Map([...out.stdout.matchAll(/^node=(\d+) pid=\d+ bootstrap=127\.0\.0\.1:(\d+)/gm)].map((m) => [Number(m[1]), Number(m[2])]))
  const bootstrap = /^bootstrap=(\S+)$/m.exec(out.stdout)?.[1]
  if (ports.size !== nodes || bootstrap === undefined) throw new Error(`run-cluster.sh printed no cluster: ${out.stdout}`)
  return { dir, bootstrap, ports }
}

/** SIGKILL of node `id` (its broker.pid): a crash, as of a ferrolog broker process. */
export function killKafkaNode(cluster: KafkaCluster, id: number): void {
  const pid = Number(readFileSync(join(cluster.dir, `node-${id}`, 'broker.pid'), 'utf8').trim())
  process.kill(pid, 'SIGKILL')
}

/** Stops every node still running (stop-cluster.sh). */
export function stopKafkaCluster(dir: string): void {
  try {
    execFileSync('bash', [join(KAFKA_TOOLS, 'stop-cluster.sh'), dir, '--timeout', '30'], { stdio: 'ignore' })
  } catch {
    // a node already killed, or one that had to be killed: nothing left either way
  }
}

export interface SecuredKafkaOptions {
  /** The protocol of the second, secured listener (the PLAINTEXT one stays for admin tools). */
  listener: 'SSL' | 'SASL_SSL' | 'SASL_PLAINTEXT'
  /** Issues the broker's certificate (SANs localhost, 127.0.0.1) and checks client certificates. */
  ca?: CertificateAuthority
  clientAuth?: 'required' | 'requested' | 'none'
  /** sasl.enabled.mechanisms (default PLAIN). */
  mechanisms?: string[]
  /** PLAIN users: name -> password. */
  plainUsers?: Record<string, string>
  /** SCRAM credentials, stored when the data dir is formatted. */
  scramUsers?: Array<{ mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; name: string; password: string }>
  /** Turns on StandardAuthorizer with these super users (plus User:ANONYMOUS, see run-broker.sh). */
  superUsers?: string[]
  /** More server properties (key=value). */
  set?: string[]
}

export interface SecuredKafka {
  dir: string
  /** The PLAINTEXT listener (ANONYMOUS, a super user when the authorizer is on): for admin tools. */
  plaintextPort: number
  /** The secured listener. */
  securePort: number
  /** The CA's certificate file (PEM) clients trust. */
  caFile: string
  /** With `ca`: the broker's PEM keystore (encrypted key, then chain) and its ssl.key.password, for a ferrolog broker configured the same way. */
  keystoreFile?: string
  keyPassword?: string
}

/**
 * Starts Apache Kafka with a secured listener (run-broker.sh's --secure-listener): writes the
 * broker's PEM keystore (key encrypted as Java 17 reads it) and truststore under DIR/ssl.
 * Stop it with stopKafkaBroker(dir).
 */
export async function startSecuredKafka(dir: string, options: SecuredKafkaOptions): Promise<SecuredKafka> {
  const ssl = join(dir, 'ssl')
  mkdirSync(ssl, { recursive: true })
  const args = ['--secure-listener', options.listener]
  const caFile = join(ssl, 'ca.pem')
  const keystoreFile = join(ssl, 'keystore.pem')
  const keyPassword = 'broker-key-secret'
  if (options.ca) {
    const server = options.ca.issue({ subject: { CN: 'kafka-broker' }, usage: 'server', keyPassword, keyEncryption: 'pbe-sha1-3des' })
    writeFileSync(keystoreFile, server.keyPem + server.chainPem)
    writeFileSync(caFile, options.ca.certificatePem)
    args.push('--ssl-keystore', keystoreFile, '--ssl-key-password', keyPassword, '--ssl-truststore', caFile)
    args.push('--ssl-client-auth', options.clientAuth ?? 'none')
  }
  if (options.mechanisms) args.push('--sasl-mechanisms', options.mechanisms.join(','))
  for (const [name, password] of Object.entries(options.plainUsers ?? {})) args.push('--plain-user', `${name}:${password}`)
  for (const u of options.scramUsers ?? []) args.push('--scram-user', `${u.mechanism}:${u.name}:${u.password}`)
  if (options.superUsers) args.push('--super-users', options.superUsers.join(';'))
  for (const kv of options.set ?? []) args.push('--set', kv)
  const out = await runKafkaBroker(dir, args)
  const securePort = Number(/secure=127\.0\.0\.1:(\d+)/.exec(out)![1])
  return { dir, plaintextPort: kafkaBrokerPort(out), securePort, caFile, ...(options.ca ? { keystoreFile, keyPassword } : {}) }
}
