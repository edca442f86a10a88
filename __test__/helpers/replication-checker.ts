/**
 * Kafka's Java clients as the judge of a replicated cluster: __test__/interop/java/ReplicationChecker.java
 * (see its comment) compiled once per content into a temporary directory, and run as
 *
 *   - `CheckedProducer`: an idempotent acks=all producer sending unique values until stop();
 *     its ACK/ERR lines go to a file, and are parsed as they come (acknowledgement times per
 *     partition, to measure how long a partition took no writes);
 *   - `CheckedGroup`: a consumer group of N members until stop() (which drains it);
 *   - `verifyTopic`: reads the whole topic back and checks it against the files.
 *
 * The Java client's warnings (log4j WARN on stderr: "Got error produce response ... Error:
 * NOT_LEADER_OR_FOLLOWER") are counted by Kafka error name: the retriable errors the producer
 * rode through.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { compiledJava, compileJava, JARS, KAFKA_TOOLS } from './java.js'

const KAFKA = KAFKA_TOOLS
const SOURCE = join(__dirname, '../interop/java/ReplicationChecker.java')
const JVM = ['-Xms64m', '-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', `-Dlog4j2.configurationFile=${join(KAFKA, 'log4j2-tools.properties')}`]

/** Fetches Kafka's jars if needed and compiles the checker (once per content of the file); before any use. */
export async function compileChecker(): Promise<void> {
  execFileSync('bash', [join(KAFKA, 'fetch-jars.sh')], { stdio: 'ignore' })
  await compileJava(SOURCE)
}

function java(args: string[]): ChildProcess {
  return spawn('java', [...JVM, '-cp', `${compiledJava(SOURCE)}:${JARS}/*`, 'ReplicationChecker', ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
}

/**
 * Counts what the Java client's warnings name: the Kafka error of each produce response it
 * retries ("... retrying (N attempts left). Error: NOT_ENOUGH_REPLICAS"; the "Received invalid
 * metadata error ... due to ...Exception" line that follows some of them is the same response)
 * and connections that failed ("could not be established").
 */
function countWarnings(text: string, into: Map<string, number>): void {
  const add = (k: string) => into.set(k, (into.get(k) ?? 0) + 1)
  for (const line of text.split('\n')) {
    const error = /retrying .*Error: ([A-Z_]+)/.exec(line)
    if (error) add(error[1])
    else if (/could not be established/.test(line)) add('connection failed')
  }
}

/** A Java process whose stdout goes to a file and is handed over line by line. */
abstract class CheckerProcess {
  readonly child: ChildProcess
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  protected stderrTail = ''
  protected done = false
  /** Kafka error name -> how many times the client logged it (retried). */
  readonly warnings = new Map<string, number>()

  constructor(
    args: string[],
    readonly outFile: string,
  ) {
    this.child = java(args)
    const out = createWriteStream(outFile)
    let partial = ''
    this.child.stdout!.on('data', (d: Buffer) => {
      out.write(d)
      const lines = (partial + d.toString()).split('\n')
      partial = lines.pop()!
      for (const l of lines) {
        if (l.startsWith('DONE')) this.done = true
        this.onLine(l)
      }
    })
    let stderrPartial = ''
    this.child.stderr!.on('data', (d: Buffer) => {
      const text = stderrPartial + d.toString()
      const cut = text.lastIndexOf('\n') + 1
      countWarnings(text.slice(0, cut), this.warnings)
      stderrPartial = text.slice(cut)
      this.stderrTail = (this.stderrTail + d.toString()).slice(-8000)
    })
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        out.end()
        resolve({ code, signal })
      }),
    )
  }

  protected abstract onLine(line: string): void

  get stderr(): string {
    return this.stderrTail
  }

  /** Ends its standard input (stop sending / drain) and waits for it to finish. */
  async stop(timeoutMs: number): Promise<void> {
    this.child.stdin!.end()
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs)
    const { code, signal } = await this.exited
    clearTimeout(timer)
    if (code !== 0 || !this.done) throw new Error(`${this.constructor.name} ended with ${code ?? signal} (done: ${this.done}): ${this.stderrTail}`)
  }

  kill(): void {
    this.child.kill('SIGKILL')
  }
}

export interface ProducerError {
  partition: number
  value: string
  at: number
  exception: string
  retriable: boolean
  message: string
}

export class CheckedProducer extends CheckerProcess {
  acked = 0
  readonly errors: ProducerError[] = []
  /** Per partition, the times (ms) of its acknowledgements, in order of arrival. */
  readonly ackTimes = new Map<number, number[]>()

  constructor(
    bootstrap: string,
    topic: string,
    outFile: string,
    options: {
      partitions?: number
      rate?: number
      acks?: 'all' | '1'
      idempotent?: boolean
      retries?: number
      max?: number
      prefix?: string
      deliveryTimeoutMs?: number
      requestTimeoutMs?: number
      /** A client.properties (security.protocol, sasl.*, ssl.*) over the producer's settings. */
      commandConfig?: string
    } = {},
  ) {
    const args = ['produce', bootstrap, topic, '--partitions', String(options.partitions ?? 3), '--rate', String(options.rate ?? 200)]
    if (options.commandConfig) args.push('--command-config', options.commandConfig)
    if (options.acks) args.push('--acks', options.acks)
    if (options.idempotent === false) args.push('--no-idempotence')
    if (options.retries !== undefined) args.push('--retries', String(options.retries))
    if (options.max !== undefined) args.push('--max', String(options.max))
    if (options.prefix) args.push('--prefix', options.prefix)
    if (options.deliveryTimeoutMs) args.push('--delivery-timeout-ms', String(options.deliveryTimeoutMs))
    if (options.requestTimeoutMs) args.push('--request-timeout-ms', String(options.requestTimeoutMs))
    super(args, outFile)
  }

  protected onLine(line: string): void {
    const f = line.split(' ')
    if (f[0] === 'ACK') {
      this.acked++
      const p = Number(f[1])
      let times = this.ackTimes.get(p)
      if (!times) this.ackTimes.set(p, (times = []))
      times.push(Number(f[4]))
    } else if (f[0] === 'ERR') {
      this.errors.push({ partition: Number(f[1]), value: f[2], at: Number(f[3]), exception: f[4], retriable: f[5] === 'retriable', message: f.slice(6).join(' ') })
    }
  }

  /** The first acknowledgement of `partition` that arrived after `t` (ms), or undefined. */
  firstAckAfter(partition: number, t: number): number | undefined {
    return this.ackTimes.get(partition)?.find((x) => x > t)
  }

  /** Resolves once `n` more records were acknowledged than when called (or rejects after timeoutMs). */
  async waitForAcks(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.acked + n
    const deadline = Date.now() + timeoutMs
    while (this.acked < target) {
      if (Date.now() > deadline)
        throw new Error(`producer: ${target - this.acked} of ${n} acknowledgements missing after ${timeoutMs} ms (errors so far: ${this.errors.length}; ${this.stderrTail.slice(-2000)})`)
      if (this.child.exitCode !== null) throw new Error(`producer exited: ${this.stderrTail}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

export class CheckedGroup extends CheckerProcess {
  seen = 0
  readonly errors: string[] = []
  readonly assignments: string[] = []

  constructor(bootstrap: string, topic: string, group: string, outFile: string, members = 2) {
    super(['group', bootstrap, topic, group, '--members', String(members)], outFile)
  }

  protected onLine(line: string): void {
    if (line.startsWith('SEEN ')) this.seen++
    else if (line.startsWith('ERR ')) this.errors.push(line)
    else if (line.startsWith('ASSIGNED ')) this.assignments.push(line)
  }
}

export interface VerifyReport {
  records: number
  acked: number
  failedSends: number
  lostCount: number
  duplicateCount: number
  offsetsReused: number
  unackedPresent: number
  groupChecked: boolean
  groupSeenLines: number
  groupMissed: number
  endOffsets: Record<string, number>
  lost: Array<{ partition: number; offset: number; value: string; ackedAt: number; found: string | null; foundAt: string }>
  duplicates: Array<{ value: string; at: string }>
  reused: string[]
  groupMissedFirst: string[]
}

/** Reads `topic` back with Kafka's consumer and checks it against the producers' and groups' files. */
export function verifyTopic(bootstrap: string, topic: string, ackFiles: string[], seenFiles: string[] = [], options: { commandConfig?: string } = {}): Promise<VerifyReport> {
  const args = ['verify', bootstrap, topic, ...ackFiles.flatMap((f) => ['--acks', f]), ...seenFiles.flatMap((f) => ['--seen', f])]
  if (options.commandConfig) args.push('--command-config', options.commandConfig)
  const child = java(args)
  child.stdin!.end()
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
    child.once('close', (code) => {
      clearTimeout(timer)
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return reject(new Error(`verify ${topic} printed no report (exit ${code}): ${err.slice(-4000)}`))
      resolve(JSON.parse(line) as VerifyReport)
    })
  })
}
