/**
 * Fault rounds against a ClusterProcesses (cluster-processes.ts) under a running idempotent
 * acks=all producer and a consumer group (Kafka's Java clients, replication-checker.ts), for
 * __test__/cluster/cluster-faults.test.ts and, with many rounds, scripts/cluster-fault-soak.mjs.
 *
 * A round: wait until every partition is led and its ISR is all its replicas (on every broker),
 * pick a victim, wait a random time, do the fault, watch Metadata until it has been dealt with,
 * undo it after a random time (restart, SIGCONT, etcd back) and wait for the full ISR again.
 * Faults:
 *   leader-kill     SIGKILL a partition's leader: a new leader must come from the ISR before it;
 *   follower-kill   SIGKILL a follower of a partition: the ISR must visibly lose it, then have it back;
 *   leader-stop     SIGSTOP a leader for longer than broker.session.timeout.ms; before SIGCONT,
 *                   Produce requests (acks=1 and acks=-1) are queued on its socket: on resume,
 *                   as a fenced ex-leader, it must refuse both;
 *   etcd-restart    SIGKILL etcd, start it again after 0.5-5 s (shorter and longer than the lease);
 *   leader-term     SIGTERM a leader (controlled shutdown): no send may fail.
 * A segment of rounds ends by stopping the producer, draining the group and reading the topic
 * back: every acknowledged record at its offset, no value twice, the group consumed every
 * acknowledged value; then, with the brokers stopped, every replica's log must be the same.
 * Whatever breaks is collected with the round it happened in (a lost record's acknowledgement
 * time places it), never thrown away.
 */
import { appendFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { PartitionInfo } from '../../ts/client/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { errorName } from '../../ts/client/errors.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import { type BrokerNode, type ClusterProcesses, type ExitRecord } from './cluster-processes.js'
import { connectTo, KafkaWire } from './kafka-socket.js'
import { CheckedGroup, CheckedProducer, verifyTopic, type VerifyReport } from './replication-checker.js'

export type FaultKind = 'leader-kill' | 'follower-kill' | 'leader-stop' | 'etcd-restart' | 'leader-term'
export const FAULT_KINDS: FaultKind[] = ['leader-kill', 'follower-kill', 'leader-stop', 'etcd-restart', 'leader-term']

export interface StaleProbe {
  acks: number
  value: string
  /** The partition's error in the stale broker's answer; null: no answer within 20 s. */
  errorCode: number | null
  error: string
  baseOffset: string
}

export interface RoundResult {
  segment: number
  round: number
  fault: FaultKind
  victim: number | null
  /** Partitions the victim led (leader faults) or followed (follower-kill). */
  partitions: number[]
  startedAt: number
  faultAt: number
  endedAt: number
  /** Fault to Metadata showing other leaders for every partition the victim led. */
  failoverMs?: number
  /** Fault to the first acknowledgement of every partition the victim led (the slowest). */
  firstAckMs?: number
  /** Fault to undo (restart, SIGCONT, etcd started). */
  downMs?: number
  /** Undo to the full ISR everywhere. */
  recoveredMs?: number
  /** The longest time any partition of the round went without an acknowledgement, from the fault to the round's end. */
  maxAckGapMs?: number
  /** SIGTERM to exit. */
  shutdownMs?: number
  /** ISR states Metadata showed during the round, per partition, in order (leader:isr). */
  isrSeen: Record<number, string[]>
  staleProbes?: StaleProbe[]
  /** Invariants this round broke (empty: none). */
  problems: string[]
}

export interface SegmentResult {
  segment: number
  topic: string
  rounds: RoundResult[]
  report: VerifyReport
  /** Partition -> broker -> records that broker's replica has that another's has not (or at other offsets). */
  replicaDivergence: string[]
  producerErrors: Record<string, number>
  producerRetried: Record<string, number>
  groupErrors: string[]
  problems: string[]
}

export interface RunOptions {
  faults: FaultKind[]
  rounds: number
  /** Rounds per topic: the producer and group are restarted, the topic checked, at each segment's end. */
  roundsPerSegment?: number
  partitions?: number
  rate?: number
  seed?: number
  /** Where the Java clients' files go. */
  workDir: string
  log?: (line: string) => void
  onSegment?: (s: SegmentResult) => void
}

/** A small seeded generator (mulberry32), so a failing sequence of choices can be replayed. */
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function describeIsr(p: PartitionInfo): string {
  return `${p.leaderId}:[${[...p.isr].sort().join(',')}]`
}

/** Samples Metadata every 100 ms, recording each partition's distinct leader:ISR states. */
class IsrWatcher {
  readonly seen: Record<number, string[]> = {}
  private running = true
  private readonly loop: Promise<void>

  constructor(
    private readonly cluster: ClusterProcesses,
    private readonly topic: string,
  ) {
    this.loop = (async () => {
      while (this.running) {
        await this.sample()
        await sleep(100)
      }
    })()
  }

  private async sample(): Promise<void> {
    const v = await this.cluster.topic(this.topic).catch(() => null)
    for (const p of v?.partitions ?? []) {
      const states = (this.seen[p.partition] ??= [])
      const s = describeIsr(p)
      if (states[states.length - 1] !== s) states.push(s)
    }
  }

  /** Stops sampling after one last sample (the round may have ended between two). */
  async stop(): Promise<Record<number, string[]>> {
    this.running = false
    await this.loop
    await this.sample()
    return this.seen
  }
}

export class FaultRunner {
  readonly results: SegmentResult[] = []
  private readonly rand: () => number
  readonly seed: number
  private readonly log: (line: string) => void

  constructor(
    readonly cluster: ClusterProcesses,
    readonly options: RunOptions,
  ) {
    this.seed = options.seed ?? Date.now() % 2 ** 31
    this.rand = random(this.seed)
    this.log = options.log ?? (() => {})
    mkdirSync(options.workDir, { recursive: true })
  }

  private between(lo: number, hi: number): number {
    return Math.round(lo + this.rand() * (hi - lo))
  }

  private pick<T>(xs: T[]): T {
    return xs[Math.floor(this.rand() * xs.length)]
  }

  get sessionTimeoutMs(): number {
    return Number(this.cluster.props['broker.session.timeout.ms'])
  }

  async run(): Promise<SegmentResult[]> {
    const perSegment = this.options.roundsPerSegment ?? this.options.rounds
    let round = 0
    for (let segment = 0; round < this.options.rounds; segment++) {
      const n = Math.min(perSegment, this.options.rounds - round)
      const result = await this.segment(segment, round, n)
      round += n
      this.results.push(result)
      this.options.onSegment?.(result)
    }
    return this.results
  }

  private async segment(segment: number, firstRound: number, rounds: number): Promise<SegmentResult> {
    const { cluster } = this
    const topic = `faults-${segment}`
    const segmentStart = Date.now()
    const partitions = this.options.partitions ?? 3
    await cluster.createTopic(topic, { partitions, replicationFactor: 3 })
    await cluster.waitForFullIsr(topic)
    const dir = this.options.workDir
    const producer = new CheckedProducer(cluster.bootstrap, topic, join(dir, `${topic}.acks`), { partitions, rate: this.options.rate ?? 150 })
    const group = new CheckedGroup(cluster.bootstrap, topic, `${topic}-group`, join(dir, `${topic}.seen`))
    const results: RoundResult[] = []
    const problems: string[] = []
    try {
      await producer.waitForAcks(50, 60_000)
      for (let i = 0; i < rounds; i++) {
        const fault = this.pick(this.options.faults)
        const r = await this.round(segment, firstRound + i, fault, topic, producer)
        results.push(r)
        const stale = r.staleProbes ? ` stale writes answered ${r.staleProbes.map((p) => `acks=${p.acks} ${p.error}`).join(', ')}` : ''
        this.log(
          `round ${r.round} ${r.fault} victim ${r.victim ?? '-'} partitions [${r.partitions}] down ${r.downMs ?? '-'} ms failover ${r.failoverMs ?? '-'} ms firstAck ${r.firstAckMs ?? '-'} ms maxAckGap ${r.maxAckGapMs ?? '-'} ms recovered ${r.recoveredMs ?? '-'} ms${stale}${r.problems.length ? ` PROBLEMS: ${r.problems.join('; ')}` : ''}`,
        )
        // Writes must flow again after every round: a stuck producer is a failure of its own.
        await producer.waitForAcks(20, 60_000).catch((e) => r.problems.push(`no acknowledgements after the round: ${(e as Error).message}`))
      }
    } finally {
      await producer.stop(150_000).catch((e) => problems.push(`producer: ${(e as Error).message}`))
      await group.stop(150_000).catch((e) => problems.push(`group: ${(e as Error).message}`))
    }
    await cluster.waitForFullIsr(topic).catch((e) => problems.push(`after the rounds: ${(e as Error).message}`))
    // A topic that cannot be read back is a problem of its own; the run goes on to the next.
    const report = await verifyTopic(cluster.bootstrap, topic, [producer.outFile, ...results.map((r) => this.staleAckFile(topic, r)).filter((f) => existsSync(f))], [group.outFile]).catch((e) => {
      problems.push(`reading ${topic} back: ${(e as Error).message}`)
      return unreadReport(producer.acked)
    })
    if (report.lostCount > 0)
      problems.push(
        `${report.lostCount} acknowledged records lost: ${report.lost
          .slice(0, 10)
          .map(
            (l) =>
              `${l.value} (p${l.partition}@${l.offset}, acked ${new Date(l.ackedAt).toISOString()} in round ${roundAt(results, l.ackedAt)}, found there: ${l.found}, elsewhere: ${l.foundAt || 'nowhere'})`,
          )
          .join('; ')}`,
      )
    if (report.duplicateCount > 0)
      problems.push(
        `${report.duplicateCount} values written twice: ${report.duplicates
          .slice(0, 10)
          .map((d) => `${d.value} at ${d.at}`)
          .join('; ')}`,
      )
    if (report.offsetsReused > 0) problems.push(`offsets served twice or backwards: ${report.reused.join(', ')}`)
    if (report.groupMissed > 0) problems.push(`the consumer group never saw ${report.groupMissed} acknowledged values: ${report.groupMissedFirst.join(', ')}`)
    const replicaDivergence = await this.compareReplicas(topic, report.endOffsets)
    for (const d of replicaDivergence) problems.push(`replicas differ: ${d}`)
    // Those during a round are that round's problems already.
    const inRound = (t: number) => results.some((r) => t >= r.startedAt && t <= r.endedAt)
    for (const e of cluster.unexpectedExits().filter((x) => x.at >= segmentStart && !inRound(x.at))) problems.push(exitProblem(e))
    return {
      segment,
      topic,
      rounds: results,
      report,
      replicaDivergence,
      producerErrors: countBy(producer.errors.map((e) => e.exception)),
      producerRetried: Object.fromEntries(producer.warnings),
      groupErrors: group.errors,
      problems,
    }
  }

  private staleAckFile(topic: string, r: RoundResult): string {
    return join(this.options.workDir, `${topic}.round-${r.round}.stale-acks`)
  }

  /**
   * Kills every broker, compares their copies of each partition below the end offset (the high
   * watermark the check read to, with the producer stopped and the ISR full: every replica must
   * hold exactly those records; a tail past it may differ), and starts them again.
   */
  private async compareReplicas(topic: string, endOffsets: Record<string, number>): Promise<string[]> {
    const partitions = Object.keys(endOffsets).length
    const { cluster } = this
    const out: string[] = []
    await Promise.all(cluster.nodes.map((b) => b.kill()))
    const copies = new Map<number, Map<number, string[]>>()
    for (const b of cluster.nodes) {
      const manager = await LogManager.open({ dataDir: b.dataDir, retentionCheckIntervalMs: 0 })
      try {
        for (let p = 0; p < partitions; p++) {
          const log = manager.getLog(topic, p)
          const records: string[] = []
          if (log) {
            const end = BigInt(endOffsets[String(p)])
            for (let offset = log.logStartOffset(); offset < end && offset < log.logEndOffset();) {
              const batch = log.readRecords(offset, { maxBytes: 1 << 20 })
              if (batch.length === 0) break
              for (const r of batch) if (r.offset < end) records.push(`${r.offset}:${r.value?.toString() ?? 'null'}`)
              offset = batch[batch.length - 1].offset + 1n
            }
          }
          if (!copies.has(p)) copies.set(p, new Map())
          copies.get(p)!.set(b.nodeId, records)
        }
      } finally {
        await manager.close()
      }
    }
    for (const [p, byBroker] of copies) {
      const [first, ...rest] = [...byBroker.entries()]
      for (const [id, records] of rest) {
        if (records.length === first[1].length && records.every((r, i) => r === first[1][i])) continue
        const a = new Set(first[1])
        const b = new Set(records)
        const onlyFirst = first[1].filter((r) => !b.has(r))
        const onlyThis = records.filter((r) => !a.has(r))
        out.push(
          `${topic}-${p}: broker ${first[0]} has ${first[1].length} records, broker ${id} ${records.length}; only on ${first[0]}: ${onlyFirst.slice(0, 5).join(' ')}${onlyFirst.length > 5 ? ` (+${onlyFirst.length - 5})` : ''}; only on ${id}: ${onlyThis.slice(0, 5).join(' ')}${onlyThis.length > 5 ? ` (+${onlyThis.length - 5})` : ''}`,
        )
      }
    }
    await Promise.all(cluster.nodes.map((b) => b.start()))
    await cluster.waitForBrokers(cluster.nodes.length, 60_000).catch((e) => out.push(`after restarting all: ${(e as Error).message}`))
    return out
  }

  async round(segment: number, round: number, fault: FaultKind, topic: string, producer: CheckedProducer): Promise<RoundResult> {
    const { cluster } = this
    const startedAt = Date.now()
    const problems: string[] = []
    const before = await cluster.waitForFullIsr(topic)
    const watcher = new IsrWatcher(cluster, topic)
    const r: RoundResult = { segment, round, fault, victim: null, partitions: [], startedAt, faultAt: 0, endedAt: 0, isrSeen: {}, problems }
    try {
      await sleep(this.between(200, 2000))
      switch (fault) {
        case 'leader-kill':
        case 'leader-term':
        case 'leader-stop': {
          const p = this.pick(before.partitions)
          const victim = cluster.node(p.leaderId)
          r.victim = victim.nodeId
          r.partitions = before.partitions.filter((x) => x.leaderId === victim.nodeId).map((x) => x.partition)
          r.faultAt = Date.now()
          if (fault === 'leader-kill') await victim.kill()
          else if (fault === 'leader-term') r.shutdownMs = await victim.terminate().catch((e) => (problems.push((e as Error).message), undefined))
          else victim.pause()
          await this.failover(r, before.partitions, victim, topic)
          if (fault === 'leader-stop') {
            // Longer than its lease for sure, then stale writes queued before it wakes up.
            await sleep(Math.max(0, r.faultAt + this.sessionTimeoutMs + this.between(500, 2500) - Date.now()))
            const { answers } = await this.queueStaleProbes(r, victim, topic, r.partitions[0])
            const undoAt = Date.now()
            victim.resume()
            r.staleProbes = await answers
            await this.recovered(r, topic, undoAt)
          } else {
            await sleep(this.between(0, 3000))
            const undoAt = Date.now()
            await victim.start()
            await this.recovered(r, topic, undoAt)
          }
          break
        }
        case 'follower-kill': {
          const p = this.pick(before.partitions)
          const victim = cluster.node(this.pick(p.replicas.filter((id) => id !== p.leaderId)))
          r.victim = victim.nodeId
          r.partitions = before.partitions.filter((x) => x.leaderId !== victim.nodeId).map((x) => x.partition)
          r.faultAt = Date.now()
          await victim.kill()
          // The ISR of every partition it followed must visibly lose it.
          await cluster
            .until(
              `broker ${victim.nodeId} out of the ISR of ${topic} ${r.partitions}`,
              async () => {
                const v = await cluster.topic(topic)
                return v && r.partitions.every((q) => !v.partitions[q].isr.includes(victim.nodeId))
              },
              this.sessionTimeoutMs + 15_000,
            )
            .catch((e) => problems.push((e as Error).message))
          await sleep(this.between(0, 3000))
          const undoAt = Date.now()
          await victim.start()
          await this.recovered(r, topic, undoAt)
          break
        }
        case 'etcd-restart': {
          r.faultAt = Date.now()
          await cluster.etcd.kill()
          await sleep(this.between(500, 5000))
          const undoAt = Date.now()
          await cluster.etcd.start()
          await this.recovered(r, topic, undoAt)
          r.partitions = before.partitions.map((x) => x.partition)
          break
        }
      }
    } catch (err) {
      problems.push(`round aborted: ${(err as Error).stack ?? err}`)
    } finally {
      r.isrSeen = await watcher.stop()
      r.endedAt = Date.now()
    }
    if (fault === 'follower-kill' && r.victim !== null) {
      for (const q of r.partitions) {
        const states = r.isrSeen[q] ?? []
        const without = states.findIndex((s) => !isrOf(s).includes(r.victim!))
        if (without < 0) problems.push(`${topic}-${q}: Metadata never showed the ISR without broker ${r.victim} (seen: ${states.join(' ')})`)
        else if (!states.slice(without).some((s) => isrOf(s).includes(r.victim!))) problems.push(`${topic}-${q}: Metadata never showed broker ${r.victim} back in the ISR (seen: ${states.join(' ')})`)
      }
    }
    // How long the victim's partitions took no acknowledgement (the acks of records sent before
    // the fault and retried count: the application waited that long).
    if (r.faultAt && r.partitions.length) {
      // The round may end (victim back, ISR full) before the producer's next retry lands on a new
      // leader (its backoff, a metadata refresh): wait for it, bounded, rather than race it.
      const acked = () => r.partitions.every((q) => producer.firstAckAfter(q, r.faultAt) !== undefined)
      for (const deadline = Date.now() + 30_000; !acked() && Date.now() < deadline;) await sleep(50)
      const firsts = r.partitions.map((q) => producer.firstAckAfter(q, r.faultAt))
      if (firsts.every((t) => t !== undefined)) r.firstAckMs = Math.max(...(firsts as number[])) - r.faultAt
    }
    if (r.faultAt) {
      let gap = 0
      for (const times of producer.ackTimes.values()) {
        let last = r.faultAt
        for (const t of times) {
          if (t < r.faultAt) continue
          if (t > r.endedAt) break
          gap = Math.max(gap, t - last)
          last = t
        }
        gap = Math.max(gap, Math.min(r.endedAt, Date.now()) - last)
      }
      r.maxAckGapMs = gap
    }
    const failed = producer.errors.filter((e) => e.at >= startedAt && e.at <= r.endedAt)
    if (fault === 'leader-term' && failed.length > 0)
      problems.push(`controlled shutdown: ${failed.length} sends failed: ${[...new Set(failed.map((e) => `${e.exception} ${e.message}`))].slice(0, 5).join('; ')}`)
    for (const e of cluster.unexpectedExits().filter((x) => x.at >= startedAt)) problems.push(exitProblem(e))
    return r
  }

  /** Until Metadata (from a live broker) shows, for every partition the victim led, another leader from the ISR before. */
  private async failover(r: RoundResult, before: PartitionInfo[], victim: BrokerNode, topic: string): Promise<void> {
    const { cluster } = this
    const led = before.filter((p) => p.leaderId === victim.nodeId)
    const view = await cluster
      .until(
        `${topic}: new leaders for [${r.partitions}] after broker ${victim.nodeId}'s ${r.fault}`,
        async () => {
          const v = await cluster.topic(topic)
          return v && led.every((p) => v.partitions[p.partition].leaderId >= 0 && v.partitions[p.partition].leaderId !== victim.nodeId) ? v : null
        },
        this.sessionTimeoutMs + 15_000,
      )
      .catch((e) => (r.problems.push((e as Error).message), null))
    if (!view) return
    r.failoverMs = Date.now() - r.faultAt
    for (const p of led) {
      const now = view.partitions[p.partition]
      if (!p.isr.includes(now.leaderId)) r.problems.push(`${topic}-${p.partition}: new leader ${now.leaderId} was not in the ISR [${p.isr}] before the fault`)
      if (now.leaderEpoch <= p.leaderEpoch) r.problems.push(`${topic}-${p.partition}: leader epoch ${now.leaderEpoch} did not move past ${p.leaderEpoch}`)
    }
  }

  /** Waits for the full ISR again; records how long it took or the problem. */
  private async recovered(r: RoundResult, topic: string, undoAt: number): Promise<void> {
    r.downMs = undoAt - r.faultAt
    await this.cluster
      .waitForFullIsr(topic, 60_000)
      .then(() => (r.recoveredMs = Date.now() - undoAt))
      .catch((e) => r.problems.push(`not recovered: ${(e as Error).message}`))
  }

  /**
   * With `victim` still stopped, queues a Produce with acks=1 and one with acks=-1 for
   * `partition` on new connections to it (the kernel accepts them for the stopped process).
   * Resolves, once they are on the sockets, with the promise of their answers (in an object: a
   * promise returned from an async function would be awaited), which the caller
   * awaits after SIGCONT: they must be errors (it was fenced while stopped). An acknowledged
   * probe is also written as an ACK line, so that the topic's check holds the cluster to it.
   */
  private async queueStaleProbes(r: RoundResult, victim: BrokerNode, topic: string, partition: number): Promise<{ answers: Promise<StaleProbe[]> }> {
    const probes = await Promise.all(
      [1, -1].map(async (acks) => {
        const value = `stale-r${r.round}-acks${acks}`
        const wire = new KafkaWire(await connectTo(victim.port), 'stale-probe')
        const answer = wire.send(produceCodec, 9, {
          transactionalId: null,
          acks,
          timeoutMs: 5000,
          topicData: [{ name: topic, partitionData: [{ index: partition, records: buildBatch([{ key: null, value: Buffer.from(value) }]) }] }],
        })
        answer.catch(() => {})
        return { acks, value, wire, answer }
      }),
    )
    await sleep(200)
    const answers = Promise.all(
      probes.map(async (p): Promise<StaleProbe> => {
        const res = await Promise.race([p.answer, sleep(20_000).then(() => null)]).catch((e) => (r.problems.push(`stale probe acks=${p.acks}: ${(e as Error).message}`), null))
        p.wire.close()
        const part = res?.responses[0]?.partitionResponses[0]
        const probe: StaleProbe = {
          acks: p.acks,
          value: p.value,
          errorCode: part ? part.errorCode : null,
          error: part ? errorName(part.errorCode) : 'no answer in 20 s',
          baseOffset: part ? String(part.baseOffset) : '',
        }
        if (probe.errorCode === 0) {
          r.problems.push(`broker ${victim.nodeId}, fenced while stopped, accepted a write with acks=${p.acks} at ${topic}-${partition}@${probe.baseOffset} on resume`)
          appendFileSync(this.staleAckFile(topic, r), `ACK ${partition} ${probe.baseOffset} ${p.value} ${Date.now()}\n`)
        } else if (probe.errorCode === null) {
          r.problems.push(`broker ${victim.nodeId}, resumed, never answered the Produce (acks=${p.acks}) queued while it was stopped`)
        }
        return probe
      }),
    )
    return { answers }
  }
}

/** The report of a topic that could not be read back: its acknowledged records count as lost. */
function unreadReport(acked: number): VerifyReport {
  return {
    records: 0,
    acked,
    failedSends: 0,
    lostCount: acked,
    duplicateCount: 0,
    offsetsReused: 0,
    unackedPresent: 0,
    groupChecked: false,
    groupSeenLines: 0,
    groupMissed: 0,
    endOffsets: {},
    lost: [],
    duplicates: [],
    reused: [],
    groupMissedFirst: [],
  }
}

function exitProblem(e: ExitRecord): string {
  const at = new Date(e.at).toISOString()
  if (e.foreignSignal) return `broker ${e.nodeId} got ${e.foreignSignal} from a process outside this test at ${at} and exited (${e.code ?? e.signal}): the run is void`
  return `broker ${e.nodeId} exited by itself (${e.code ?? e.signal}) at ${at}`
}

function isrOf(state: string): number[] {
  const m = /\[([\d,]*)\]/.exec(state)
  return m && m[1] ? m[1].split(',').map(Number) : []
}

function roundAt(rounds: RoundResult[], t: number): string {
  const r = rounds.find((x) => t >= x.startedAt && t <= x.endedAt)
  if (r) return `${r.round} (${r.fault} of broker ${r.victim ?? '-'})`
  const after = [...rounds].reverse().find((x) => t > x.endedAt)
  return after ? `after ${after.round}` : 'before the first'
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const x of xs) out[x] = (out[x] ?? 0) + 1
  return out
}
