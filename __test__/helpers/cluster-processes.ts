/**
 * A ferrolog cluster of real processes for fault tests (issue #14): a real etcd
 * (helpers/etcd.ts) and N `ferrolog broker --cluster` child processes (dist/ must be built), each
 * on its own port and data directory, kept across restarts, so that a broker can be SIGKILLed,
 * SIGSTOPped and SIGCONTed, SIGTERMed (a controlled shutdown) and started again as in production.
 *
 * Every broker's stdout and stderr (its JSON log lines; FERROLOG_LOG_LEVEL passes through) go to
 * `<root>/broker-<id>.log`, appended across its restarts with a `=== harness:` line at each start
 * and signal, so a failure can be read against what each broker did. A broker that exits without
 * the harness having signalled it is recorded (`unexpectedExits`): a test must fail on it (one
 * that logged a signal the harness did not send was stopped by some other process on the
 * machine, and is named so).
 *
 * Metadata is read with ferrolog's own client (ts/client), from any live broker or from one
 * named broker (its own view).
 *
 * Secured clusters: `listeners` names the listeners each broker has (NAME://127.0.0.1:<port>
 * each, the first one the broker's `address`; their protocols and settings come from `props`),
 * and `clientSecurity` is what the harness's own clients connect with.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClientSecurity } from '../../ts/client/client-security.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import type { PartitionInfo } from '../../ts/client/metadata.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { errorName } from '../../ts/client/errors.js'
import { freePorts, startEtcd, type EtcdServer } from './etcd.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

/** Settings every broker of a test cluster gets unless the test overrides them. */
export const FAST_FAILURE_PROPS: Readonly<Record<string, string>> = {
  // Lease TTL: a dead broker's partitions move within about this.
  'broker.session.timeout.ms': '2500',
  // A follower that stopped fetching leaves the ISR within this (the check runs every half).
  'replica.lag.time.max.ms': '2000',
  'default.replication.factor': '3',
  'offsets.topic.replication.factor': '3',
  'min.insync.replicas': '2',
  'num.partitions': '3',
  'group.initial.rebalance.delay.ms': '0',
  'group.min.session.timeout.ms': '1000',
  'auto.create.topics.enable': 'false',
}

export type BrokerState = 'running' | 'paused' | 'stopped'

export interface ExitRecord {
  nodeId: number
  code: number | null
  signal: NodeJS.Signals | null
  at: number
  expected: boolean
  /** A signal the broker logged receiving that the harness did not send (another process's kill). */
  foreignSignal?: string
}

/** One `ferrolog broker` process slot: its id, port and data directory stay across restarts. */
export class BrokerNode {
  state: BrokerState = 'stopped'
  child: ChildProcess | null = null
  /** When the harness last started it (ms). */
  startedAt = 0
  private expectExit = false
  private log: WriteStream | null = null
  private exited: Promise<void> = Promise.resolve()
  private tail = ''

  constructor(
    readonly cluster: ClusterProcesses,
    readonly nodeId: number,
    readonly port: number,
    readonly dataDir: string,
    readonly configFile: string,
    readonly logFile: string,
    /** Each listener's port, by name (secured clusters: ClusterOptions.listeners); the first is `port`. */
    readonly listenerPorts: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** What --listen gets: `127.0.0.1:<port>`, or every listener `NAME://127.0.0.1:<port>`. */
  private get listen(): string {
    if (this.listenerPorts.size === 0) return this.address
    return [...this.listenerPorts].map(([name, port]) => `${name}://127.0.0.1:${port}`).join(',')
  }

  get address(): string {
    return `127.0.0.1:${this.port}`
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** The last 8 KB of its output (stdout and stderr). */
  recentOutput(): string {
    return this.tail
  }

  note(text: string): void {
    appendFileSync(this.logFile, `=== harness: ${new Date().toISOString()} ${text}\n`)
  }

  /** Starts the process and resolves once it prints that it listens (30 s at most). */
  async start(): Promise<void> {
    if (this.child) throw new Error(`broker ${this.nodeId} is already running`)
    this.note(`start (node.id ${this.nodeId}, port ${this.port})`)
    const args = [CLI, 'broker', '--cluster', this.cluster.etcd.clusterUrl, '--node-id', String(this.nodeId), '--listen', this.listen, '--data-dir', this.dataDir, '--config', this.configFile]
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.cluster.env } })
    this.child = child
    this.state = 'running'
    this.startedAt = Date.now()
    this.expectExit = false
    const log = createWriteStream(this.logFile, { flags: 'a' })
    this.log = log
    let stdout = ''
    const take = (d: Buffer) => {
      log.write(d)
      this.tail = (this.tail + d.toString()).slice(-8192)
    }
    child.stderr!.on('data', take)
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        log.end()
        if (this.child === child) {
          this.child = null
          this.state = 'stopped'
        }
        const foreign = this.expectExit ? undefined : /"msg":"signal received".*?"signal":"(\w+)"/.exec(this.tail)?.[1]
        this.cluster.exits.push({ nodeId: this.nodeId, code, signal, at: Date.now(), expected: this.expectExit, foreignSignal: foreign })
        resolve()
      }),
    )
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`broker ${this.nodeId} did not listen in 30 s: ${this.tail}`)), 30_000)
      child.once('close', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`broker ${this.nodeId} exited (${code ?? signal}) while starting: ${this.tail}`))
      })
      child.stdout!.on('data', (d: Buffer) => {
        take(d)
        stdout += d.toString()
        if (/listening on /.test(stdout)) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  }

  /** Sends `signal` and, unless it is SIGSTOP/SIGCONT, waits for the exit. */
  private async signal(signal: NodeJS.Signals, timeoutMs = 30_000): Promise<void> {
    const child = this.child
    if (!child) return
    this.note(signal)
    this.expectExit = true
    if (this.state === 'paused' && signal !== 'SIGKILL') child.kill('SIGCONT')
    child.kill(signal)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    await this.exited
    clearTimeout(timer)
  }

  /** SIGKILL: a crash. Resolves once it has exited. */
  kill(): Promise<void> {
    return this.signal('SIGKILL')
  }

  /**
   * SIGTERM: the broker's controlled shutdown, then exit. Resolves with how long it took;
   * rejects if it had to be SIGKILLed after `timeoutMs`.
   */
  async terminate(timeoutMs = 30_000): Promise<number> {
    const t0 = Date.now()
    const child = this.child
    if (!child) return 0
    await this.signal('SIGTERM', timeoutMs)
    const exit = this.cluster.exits[this.cluster.exits.length - 1]
    if (exit.signal === 'SIGKILL') throw new Error(`broker ${this.nodeId} did not exit within ${timeoutMs} ms of SIGTERM`)
    return Date.now() - t0
  }

  /** SIGSTOP: the process freezes (a long GC pause, a stalled VM); its sockets stay open. */
  pause(): void {
    if (!this.child || this.state !== 'running') throw new Error(`broker ${this.nodeId} is not running`)
    this.note('SIGSTOP')
    this.child.kill('SIGSTOP')
    this.state = 'paused'
  }

  /** SIGCONT after pause(). */
  resume(): void {
    if (!this.child || this.state !== 'paused') throw new Error(`broker ${this.nodeId} is not paused`)
    this.note('SIGCONT')
    this.child.kill('SIGCONT')
    this.state = 'running'
  }

  /** SIGKILL (or `how`) and start again on the same port and data directory. */
  async restart(how: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    if (how === 'SIGKILL') await this.kill()
    else await this.terminate()
    await this.start()
  }
}

export interface ClusterOptions {
  brokers?: number
  /** Broker settings over FAST_FAILURE_PROPS. */
  props?: Record<string, string>
  /** Extra environment for the brokers (FERROLOG_LOG_LEVEL=debug, ...). */
  env?: Record<string, string>
  /** Where data dirs and logs go (default: a new temporary directory). */
  root?: string
  /** The listener names of each broker (default: one PLAINTEXT listener, `--listen 127.0.0.1:<port>`). */
  listeners?: string[]
  /** How the harness's clients (Metadata, CreateTopics) connect: the first listener's security. */
  clientSecurity?: ClientSecurity
}

/** A topic's partitions as Metadata tells them, and the brokers it lists. */
export interface TopicView {
  brokers: number[]
  controllerId: number
  partitions: PartitionInfo[]
}

export class ClusterProcesses {
  readonly nodes: BrokerNode[] = []
  readonly exits: ExitRecord[] = []

  private constructor(
    readonly etcd: EtcdServer,
    readonly root: string,
    readonly props: Record<string, string>,
    readonly env: Record<string, string>,
    readonly clientSecurity?: ClientSecurity,
  ) {}

  /** Starts etcd and `brokers` brokers (node ids 1..N) and waits until all are registered. */
  static async start(options: ClusterOptions = {}): Promise<ClusterProcesses> {
    const root = options.root ?? mkdtempSync(join(tmpdir(), 'ferrolog-cluster-'))
    mkdirSync(root, { recursive: true })
    const etcd = await startEtcd()
    const props = { ...FAST_FAILURE_PROPS, ...options.props }
    const cluster = new ClusterProcesses(etcd, root, props, options.env ?? {}, options.clientSecurity)
    const n = options.brokers ?? 3
    const names = options.listeners ?? []
    const ports = await freePorts(n * Math.max(1, names.length))
    for (let i = 0; i < n; i++) {
      const id = i + 1
      const configFile = join(root, `broker-${id}.properties`)
      writeFileSync(
        configFile,
        Object.entries(props)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
      )
      const own = names.length > 0 ? ports.slice(i * names.length, (i + 1) * names.length) : [ports[i]]
      const listenerPorts = new Map(names.map((name, k) => [name, own[k]]))
      cluster.nodes.push(new BrokerNode(cluster, id, own[0], join(root, `data-${id}`), configFile, join(root, `broker-${id}.log`), listenerPorts))
    }
    try {
      await Promise.all(cluster.nodes.map((b) => b.start()))
      await cluster.waitForBrokers(n)
    } catch (err) {
      await cluster.close(true)
      throw err
    }
    return cluster
  }

  node(id: number): BrokerNode {
    const b = this.nodes.find((n) => n.nodeId === id)
    if (!b) throw new Error(`no broker ${id}`)
    return b
  }

  /** host:port of every broker, comma-separated (bootstrap.servers). */
  get bootstrap(): string {
    return this.nodes.map((b) => b.address).join(',')
  }

  running(): BrokerNode[] {
    return this.nodes.filter((b) => b.state === 'running')
  }

  /** Exits the harness did not cause. */
  unexpectedExits(): ExitRecord[] {
    return this.exits.filter((e) => !e.expected)
  }

  /**
   * Metadata for `topics` (null: all) from `via` (its own view) or else from the first running
   * broker that answers; null when none answers.
   */
  async metadata(topics: string[] | null, via?: BrokerNode): Promise<{ brokers: number[]; controllerId: number; topics: Map<string, PartitionInfo[]> } | null> {
    const candidates = via ? [via] : this.running()
    for (const b of candidates) {
      const client = new NetworkClient({ bootstrapServers: b.address, requestTimeoutMs: 3000, connectTimeoutMs: 2000, clientId: 'cluster-harness', security: this.clientSecurity })
      try {
        const md = await client.refreshMetadata(topics)
        const out = new Map<string, PartitionInfo[]>()
        for (const name of topics ?? []) {
          const t = md.topic(name)
          if (t)
            out.set(
              name,
              [...t.partitions].sort((a, b) => a.partition - b.partition),
            )
        }
        return { brokers: md.nodes.map((n) => n.nodeId).sort((a, b) => a - b), controllerId: md.controllerId, topics: out }
      } catch {
        // next broker
      } finally {
        await client.close()
      }
    }
    return null
  }

  /** One topic's view, or null when no broker answers or the topic is not (yet) listed. */
  async topic(name: string, via?: BrokerNode): Promise<TopicView | null> {
    const md = await this.metadata([name], via)
    const partitions = md?.topics.get(name)
    if (!md || !partitions || partitions.length === 0) return null
    return { brokers: md.brokers, controllerId: md.controllerId, partitions }
  }

  /** Polls `check` every 100 ms until it returns a value; throws naming `what` after `timeoutMs`. */
  async until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    let last: unknown
    for (;;) {
      try {
        const v = await check()
        if (v) return v
      } catch (err) {
        last = err
      }
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  /** Until Metadata lists `n` brokers. */
  waitForBrokers(n: number, timeoutMs = 30_000): Promise<number[]> {
    return this.until(
      `${n} brokers in Metadata`,
      async () => {
        const md = await this.metadata(null)
        return md && md.brokers.length === n ? md.brokers : null
      },
      timeoutMs,
    )
  }

  /**
   * Until every partition of `topic` has a leader and its ISR is all its replicas, as every
   * running broker tells it (each its own view), and all brokers are listed.
   */
  waitForFullIsr(topic: string, timeoutMs = 60_000): Promise<TopicView> {
    return this.until(
      `${topic}: every partition led, ISR = replicas, on every broker`,
      async () => {
        let view: TopicView | null = null
        for (const b of this.running()) {
          const v = await this.topic(topic, b)
          if (!v || v.brokers.length !== this.nodes.length) return null
          if (!v.partitions.every((p) => p.errorCode === 0 && p.leaderId >= 0 && sameSet(p.isr, p.replicas))) return null
          view ??= v
          if (JSON.stringify(v.partitions.map(leaderAndIsr)) !== JSON.stringify(view.partitions.map(leaderAndIsr))) return null
        }
        return view
      },
      timeoutMs,
    )
  }

  /** CreateTopics (through any running broker, retried while there is no controller). */
  async createTopic(name: string, options: { partitions?: number; replicationFactor?: number; assignment?: number[][]; configs?: Record<string, string> } = {}): Promise<void> {
    await this.until(
      `CreateTopics ${name}`,
      async () => {
        const client = new NetworkClient({ bootstrapServers: this.running()[0].address, requestTimeoutMs: 15_000, clientId: 'cluster-harness', security: this.clientSecurity })
        try {
          const res = await client.request(-1, createTopicsCodec, {
            topics: [
              {
                name,
                numPartitions: options.assignment ? -1 : (options.partitions ?? 3),
                replicationFactor: options.assignment ? -1 : (options.replicationFactor ?? 3),
                assignments: (options.assignment ?? []).map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
                configs: Object.entries(options.configs ?? {}).map(([k, v]) => ({ name: k, value: v })),
              },
            ],
            timeoutMs: 10_000,
            validateOnly: false,
          })
          const r = res.topics[0]
          if (r.errorCode === 0) return true
          throw new Error(`CreateTopics ${name}: ${errorName(r.errorCode)} ${r.errorMessage ?? ''}`)
        } finally {
          await client.close()
        }
      },
      30_000,
    )
  }

  /** Every broker's log file, for a failure's report: the last `bytes` of each. */
  logTails(bytes = 20_000): string {
    return this.nodes
      .map((b) => {
        let text = ''
        try {
          text = readFileSync(b.logFile, 'utf8')
        } catch {}
        return `--- ${b.logFile} (last ${bytes} bytes) ---\n${text.slice(-bytes)}`
      })
      .join('\n')
  }

  /** Kills everything; removes the directory unless `keep` (or FERROLOG_KEEP_CLUSTER is set). */
  async close(keep = false): Promise<void> {
    await Promise.all(this.nodes.map((b) => b.kill()))
    await this.etcd.close()
    if (!keep && !process.env.FERROLOG_KEEP_CLUSTER) rmSync(this.root, { recursive: true, force: true })
  }
}

export function sameSet(a: number[], b: number[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join()
}

function leaderAndIsr(p: PartitionInfo): string {
  return `${p.partition}:${p.leaderId}:${[...p.isr].sort().join('.')}`
}
