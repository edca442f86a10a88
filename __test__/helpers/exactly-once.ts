/**
 * Kafka's exactly-once check, as its system tests run it (transactions_test.py): Kafka's own
 * `TransactionalMessageCopier` copies an input partition to an output topic in transactions
 * (random aborts on, the consumed offsets committed in each transaction), while the copier and
 * the broker are SIGKILLed and restarted mid-transaction; afterwards Kafka's Java consumer reads
 * the output under read_committed (ExactlyOnceVerifier.java) and must see every input value
 * exactly once and nothing aborted.
 *
 * The broker is a `BrokerTarget`: a ferrolog process or a real Apache Kafka broker, killed and
 * restarted on the same port and data dir.
 *
 * The copier's Java clients log each request they send with its version
 * (java/log4j2-client-requests.properties: NetworkClient's DEBUG lines), counted in `requests`
 * ("END_TXN v5": n): which transaction protocol the producer negotiated.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { SHORT_JVM, runJava } from './java.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const JARS = join(KAFKA, '.jars')
const COPIER_LOG = `-Dlog4j2.configurationFile=${join(__dirname, '../interop/java/log4j2-client-requests.properties')}`
/** A request the copier sent, as its NetworkClient logs it. */
const CLIENT_REQUEST = /^CLIENT-REQUEST .*?Sending \w+ request with header RequestHeader\(apiKey=(\w+), apiVersion=(\d+)/
const VERIFIER = join(__dirname, '../interop/java/ExactlyOnceVerifier.java')

/** A broker the check can SIGKILL and bring back where its clients look for it. */
export interface BrokerTarget {
  readonly bootstrap: string
  kill9(): Promise<void>
  restart(): Promise<void>
  stop(): Promise<void>
}

export interface ExactlyOnceOptions {
  records: number
  /** Copier SIGKILLs, each once it committed `progressBeforeKill` + a random 0-199 records in that run. */
  copierKills: number
  brokerKills: number
  progressBeforeKill: number
  /** Logs each step (the long-run script prints them). */
  log?: (msg: string) => void
}

export interface VerifierResult {
  records: number
  distinct: number
  end: number
  duplicated: string
  missing: string
  raw: string
}

export interface ExactlyOnceResult {
  committed: VerifierResult
  uncommitted: VerifierResult
  /** Kills that hit a copier still copying (not one that had finished). */
  killsMidCopy: number
  copierRuns: number
  /** The requests every copier run sent, by API and version ("END_TXN v5"). */
  requests: Record<string, number>
}

const IN = 'eos-in'
const OUT = 'eos-out'
const TXN_ID = 'eos-copier'

/** A running TransactionalMessageCopier: its `totalProcessed` (committed in this run) as it prints it. */
class CopierRun {
  readonly child: ChildProcess
  processed = 0
  output = ''
  readonly exited: Promise<number | null>

  private readonly requests: Record<string, number>

  constructor(bootstrap: string, requests: Record<string, number>) {
    this.requests = requests
    const args = [
      ...SHORT_JVM,
      COPIER_LOG,
      '-cp',
      `${JARS}/*`,
      'org.apache.kafka.tools.TransactionalMessageCopier',
      '--input-topic',
      IN,
      '--input-partition',
      '0',
      '--output-topic',
      OUT,
      '--broker-list',
      bootstrap,
      '--transactional-id',
      TXN_ID,
      '--consumer-group',
      TXN_ID,
      '--transaction-size',
      '50',
      '--transaction-timeout',
      '10000',
      '--enable-random-aborts',
    ]
    this.child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let partial = ''
    this.child.stdout!.on('data', (d: Buffer) => {
      partial += d.toString()
      const lines = partial.split('\n')
      partial = lines.pop()!
      for (const line of lines) {
        const m = /"totalProcessed":(\d+)/.exec(line)
        if (m) this.processed = Number(m[1])
        if (!line.includes('"ProcessLoop"')) this.output += line + '\n'
      }
    })
    let partialErr = ''
    this.child.stderr!.on('data', (d: Buffer) => {
      partialErr += d.toString()
      const lines = partialErr.split('\n')
      partialErr = lines.pop()!
      for (const line of lines) {
        const m = CLIENT_REQUEST.exec(line)
        if (m) this.requests[`${m[1]} v${m[2]}`] = (this.requests[`${m[1]} v${m[2]}`] ?? 0) + 1
        else if (!line.startsWith('CLIENT-REQUEST')) this.output += line + '\n'
      }
    })
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)))
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** Resolves true once `n` records are committed in this run, false if it exited first or in `timeoutMs`. */
  async until(n: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (this.running && this.processed < n && Date.now() < deadline) await sleep(20)
    return this.running && this.processed >= n
  }

  async kill9(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL')
    await this.exited
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function verify(bootstrap: string, isolation: 'read_committed' | 'read_uncommitted', records: number): Promise<VerifierResult> {
  const r = await runJava(VERIFIER, [bootstrap, OUT, isolation, String(records)])
  const m = /records=(\d+) distinct=(\d+) end=(\d+) duplicated=(\[.*?\]) missing=(\[.*?\])/.exec(r.stdout)
  if (r.status !== 0 || !m) throw new Error(`ExactlyOnceVerifier ${isolation} exited ${r.status}: ${r.stdout}\n${r.stderr}`)
  return { records: Number(m[1]), distinct: Number(m[2]), end: Number(m[3]), duplicated: m[4], missing: m[5], raw: m[0] }
}

/** Creates the topics, produces `records` values v0.. to the input, runs the copier through the kills, and verifies. */
export async function runExactlyOnceCheck(target: BrokerTarget, options: ExactlyOnceOptions): Promise<ExactlyOnceResult> {
  const log = options.log ?? (() => {})
  const kafka = new Kafka({ clientId: 'eos-check', brokers: [target.bootstrap], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    topics: [
      { topic: IN, numPartitions: 1 },
      { topic: OUT, numPartitions: 1 },
    ],
    waitForLeaders: true,
  })
  await admin.disconnect()
  const producer = kafka.producer({ idempotent: true })
  await producer.connect()
  for (let i = 0; i < options.records; i += 500) {
    const messages = Array.from({ length: Math.min(500, options.records - i) }, (_, j) => ({ value: `v${i + j}` }))
    await producer.send({ topic: IN, acks: -1, messages })
  }
  await producer.disconnect()
  log(`produced ${options.records} records to ${IN}`)

  let killsMidCopy = 0
  let copierRuns = 0
  const requests: Record<string, number> = {}
  const kills: ('copier' | 'broker')[] = [...Array(options.copierKills).fill('copier'), ...Array(options.brokerKills).fill('broker')]
  // The broker kills spread among the copier kills.
  kills.sort(() => Math.random() - 0.5)
  // A copier gives up by itself when its consumer cannot learn its position in 60 s (the group's
  // offsets stay unstable while the transaction of the copier killed before is still open, until
  // its timeout aborts it; Kafka itself, just restarted, took longer than that in one CI run):
  // a copier that ended on its own with that timeout is started again, at most RESTARTS times.
  const RESTARTS = 3
  const gaveUp = (c: CopierRun) => !c.running && /TimeoutException/.test(c.output)
  for (const what of kills) {
    let copier = new CopierRun(target.bootstrap, requests)
    copierRuns++
    // At a random point of the copy: right after the copier printed a progress line, which it
    // does before each poll, so the kill lands in the transaction it begins next.
    const progress = options.progressBeforeKill + Math.floor(Math.random() * 200)
    let reached = await copier.until(progress, 90_000)
    for (let i = 0; !reached && gaveUp(copier) && i < RESTARTS; i++) {
      log(`copier gave up (${copier.output.trim().split('\n').at(-1)}); started again`)
      copier = new CopierRun(target.bootstrap, requests)
      copierRuns++
      reached = await copier.until(progress, 90_000)
    }
    if (reached && copier.running) killsMidCopy++
    if (what === 'broker') {
      await target.kill9()
      await copier.kill9()
      await target.restart()
    } else {
      await copier.kill9()
    }
    log(`${what} SIGKILL after ${copier.processed} committed in that run${reached ? '' : ` (copier ended first: ${copier.output.trim().slice(-500)})`}`)
  }

  let last: CopierRun
  for (let i = 0; ; i++) {
    last = new CopierRun(target.bootstrap, requests)
    copierRuns++
    let timer: NodeJS.Timeout | undefined
    const code = await Promise.race([last.exited, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 180_000)))])
    clearTimeout(timer)
    if (code === 0) break
    await last.kill9()
    if (!gaveUp(last) || i >= RESTARTS) throw new Error(`the last copier run ended with ${code}: ${last.output.trim().slice(-2000)}`)
    log(`the last copier gave up (${last.output.trim().split('\n').at(-1)}); started again`)
  }
  log(`last copier run committed ${last.processed} and exited`)
  const committed = await verify(target.bootstrap, 'read_committed', options.records)
  const uncommitted = await verify(target.bootstrap, 'read_uncommitted', options.records)
  log(`read_committed ${committed.raw}; read_uncommitted ${uncommitted.raw}; requests ${JSON.stringify(requests)}`)
  return { committed, uncommitted, killsMidCopy, copierRuns, requests }
}
