/**
 * Issue #14's faults with real processes: a real etcd and three `ferrolog broker --cluster`
 * processes (helpers/cluster-processes.ts), Kafka's own Java producer (idempotent, acks=all) and
 * a consumer group of two running throughout (helpers/replication-checker.ts), and faults with
 * random timing (helpers/fault-rounds.ts): SIGKILL of a leader, SIGKILL and restart of a
 * follower, SIGSTOP of a leader past its lease (with writes queued for it to find on resume),
 * etcd killed and restarted, SIGTERM of a leader (controlled shutdown); then one replica of three
 * alive, where acks=all must get NOT_ENOUGH_REPLICAS and acks=1 must work.
 *
 * After the rounds every topic is read back with Kafka's consumer: nothing acknowledged lost,
 * no value twice, offsets unique, the group consumed every acknowledged record; and every
 * replica's log holds the same records below the high watermark.
 *
 * A few rounds each here (CLUSTER_FAULT_ROUNDS, default 2; the mixed test
 * CLUSTER_FAULT_SOAK_ROUNDS, default 3, of CLUSTER_FAULT_FAULTS, a new topic every
 * CLUSTER_FAULT_PER_TOPIC rounds, its figures written to CLUSTER_FAULT_REPORT);
 * scripts/cluster-fault-soak.mjs runs that one with hundreds of rounds and sums the figures up.
 * CLUSTER_FAULT_SEED replays a run's choices of faults and victims (not its timing). Needs
 * dist/ (npm test's pretest builds it), etcd, Java and tools/kafka's jars. A failed test keeps
 * its cluster directory (data, broker logs, the clients' ACK/SEEN files) and names it; brokers
 * log at FERROLOG_LOG_LEVEL (pass debug for the details).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ClusterProcesses } from '../helpers/cluster-processes.js'
import { FAULT_KINDS, FaultRunner, type FaultKind, type SegmentResult } from '../helpers/fault-rounds.js'
import { CheckedProducer, compileChecker, verifyTopic } from '../helpers/replication-checker.js'

const ROUNDS = Number(process.env.CLUSTER_FAULT_ROUNDS ?? 2)
const SOAK_ROUNDS = Number(process.env.CLUSTER_FAULT_SOAK_ROUNDS ?? 3)
const SEED = process.env.CLUSTER_FAULT_SEED ? Number(process.env.CLUSTER_FAULT_SEED) : undefined
/** The mixed test's faults (comma-separated FaultKinds; default all) and rounds per topic. */
const SOAK_FAULTS = (process.env.CLUSTER_FAULT_FAULTS?.split(',') as FaultKind[] | undefined) ?? FAULT_KINDS
const SOAK_PER_TOPIC = Number(process.env.CLUSTER_FAULT_PER_TOPIC ?? 25)
/** Where the mixed test writes its figures (scripts/cluster-fault-soak.mjs reads them). */
const REPORT = process.env.CLUSTER_FAULT_REPORT
/** Per round at most: a lease, a restart, the ISR back, the producer's retries. */
const ROUND_MS = 45_000

let cluster: ClusterProcesses | undefined
let failed = false

beforeAll(() => compileChecker(), 300_000)

afterEach(async (ctx) => {
  const keep = failed || ctx.task.result?.state === 'fail'
  if (cluster && keep) console.log(`cluster-faults: kept ${cluster.root} (broker-<id>.log, data-<id>/, work/*.acks, *.seen)`)
  await cluster?.close(keep)
  cluster = undefined
  failed = false
})

async function startCluster(): Promise<ClusterProcesses> {
  cluster = await ClusterProcesses.start({ brokers: 3, env: process.env.FERROLOG_LOG_LEVEL ? { FERROLOG_LOG_LEVEL: process.env.FERROLOG_LOG_LEVEL } : {} })
  return cluster
}

/** Every problem of every round and segment, each naming its round. */
function problemsOf(segments: SegmentResult[]): string[] {
  return segments.flatMap((s) => [
    ...s.rounds.flatMap((r) => r.problems.map((p) => `${s.topic} round ${r.round} (${r.fault} of broker ${r.victim ?? '-'}): ${p}`)),
    ...s.problems.map((p) => `${s.topic}: ${p}`),
  ])
}

async function runRounds(faults: FaultKind[], rounds: number, options: { roundsPerSegment?: number; report?: boolean } = {}): Promise<SegmentResult[]> {
  const c = await startCluster()
  const done: SegmentResult[] = []
  const runner: FaultRunner = new FaultRunner(c, {
    faults,
    rounds,
    roundsPerSegment: options.roundsPerSegment,
    seed: SEED,
    workDir: join(c.root, 'work'),
    log: (line) => console.log(`[${faults.join(',')}] ${line}`),
    // Written after every topic, so that a soak cut short still leaves its figures.
    onSegment: (s) => {
      done.push(s)
      if (REPORT && options.report) writeFileSync(REPORT, JSON.stringify({ seed: runner.seed, root: c.root, segments: done }, null, 1))
    },
  })
  console.log(`[${faults.join(',')}] seed ${runner.seed}, ${rounds} rounds, cluster in ${c.root}`)
  const segments = await runner.run()
  const problems = problemsOf(segments)
  if (problems.length > 0) {
    failed = true
    console.log(`[${faults.join(',')}] FAILED; broker logs:\n${c.logTails(6000)}`)
  }
  for (const s of segments) {
    console.log(
      `[${faults.join(',')}] ${s.topic}: ${s.report.acked} acknowledged, ${s.report.records} in the log, lost ${s.report.lostCount}, duplicates ${s.report.duplicateCount}, group missed ${s.report.groupMissed}; send failures ${JSON.stringify(s.producerErrors)}; retried ${JSON.stringify(s.producerRetried)}`,
    )
  }
  expect(problems).toEqual([])
  for (const s of segments) {
    expect(s.report.acked).toBeGreaterThan(0)
    expect(s.report.lostCount + s.report.duplicateCount + s.report.offsetsReused + s.report.groupMissed).toBe(0)
  }
  return segments
}

describe('cluster faults under an acks=all idempotent producer and a consumer group (real processes)', () => {
  it(
    `SIGKILL of a leader (${ROUNDS} rounds): a new leader from the ISR at a higher epoch, the producer's retries succeed, nothing acknowledged lost, no duplicate`,
    async () => {
      const [s] = await runRounds(['leader-kill'], ROUNDS)
      for (const r of s.rounds) {
        expect(r.failoverMs).toBeDefined()
        expect(r.firstAckMs).toBeDefined()
      }
    },
    ROUNDS * ROUND_MS + 240_000,
  )

  it(
    `SIGKILL and restart of a follower (${ROUNDS} rounds): the ISR shrinks and grows back in Metadata, the follower catches up, replicas agree`,
    async () => {
      const [s] = await runRounds(['follower-kill'], ROUNDS)
      for (const r of s.rounds) {
        // States are "leader:[isr]"; the follower left the ISR and came back.
        const isr = (state: string) =>
          state
            .slice(state.indexOf('[') + 1, -1)
            .split(',')
            .map(Number)
        for (const p of r.partitions) {
          const states = r.isrSeen[p]
          expect(states.some((x) => !isr(x).includes(r.victim!))).toBe(true)
          expect(isr(states[states.length - 1])).toContain(r.victim)
        }
        expect(r.recoveredMs).toBeDefined()
      }
      expect(s.replicaDivergence).toEqual([])
    },
    ROUNDS * ROUND_MS + 240_000,
  )

  it(
    `SIGSTOP of a leader for longer than its lease (${ROUNDS} rounds): fenced, and on resume it refuses the writes queued for it (acks=1 and acks=all)`,
    async () => {
      const [s] = await runRounds(['leader-stop'], ROUNDS)
      for (const r of s.rounds) {
        expect(r.staleProbes?.map((p) => p.acks)).toEqual([1, -1])
        for (const p of r.staleProbes!) expect({ acks: p.acks, refused: p.errorCode !== null && p.errorCode !== 0, error: p.error }).toMatchObject({ refused: true })
      }
    },
    ROUNDS * ROUND_MS + 240_000,
  )

  it(
    `restart of etcd (${ROUNDS} rounds, down 0.5-5 s): writes resume, nothing acknowledged lost, no broker dies`,
    async () => {
      await runRounds(['etcd-restart'], ROUNDS)
    },
    ROUNDS * ROUND_MS + 240_000,
  )

  it(
    `controlled shutdown: SIGTERM of a leader under load (${ROUNDS} rounds): no send fails, the broker exits promptly`,
    async () => {
      const [s] = await runRounds(['leader-term'], ROUNDS)
      expect(s.producerErrors).toEqual({})
      for (const r of s.rounds) expect(r.shutdownMs).toBeLessThan(30_000)
    },
    ROUNDS * ROUND_MS + 240_000,
  )

  it(
    `faults mixed at random (${SOAK_ROUNDS} rounds of ${SOAK_FAULTS.join(', ')})`,
    async () => {
      await runRounds(SOAK_FAULTS, SOAK_ROUNDS, { roundsPerSegment: SOAK_PER_TOPIC, report: true })
    },
    SOAK_ROUNDS * ROUND_MS + Math.ceil(SOAK_ROUNDS / SOAK_PER_TOPIC) * 300_000 + 240_000,
  )

  it('one replica of three alive: acks=all gets NOT_ENOUGH_REPLICAS, acks=1 works; the others come back and nothing acknowledged is lost', async () => {
    const c = await startCluster()
    const work = join(c.root, 'work')
    const { mkdirSync } = await import('node:fs')
    mkdirSync(work, { recursive: true })
    await c.createTopic('lonely', { partitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } })
    const before = await c.waitForFullIsr('lonely')
    // The survivor: not the leader of partition 0, so that partition fails over to it too.
    const survivor = before.partitions[0].replicas.find((id) => id !== before.partitions[0].leaderId)!
    const first = new CheckedProducer(c.bootstrap, 'lonely', join(work, 'before.acks'), { max: 300, rate: 300 })
    await first.waitForAcks(300)
    await first.stop(60_000)

    for (const b of c.nodes.filter((n) => n.nodeId !== survivor)) await b.kill()
    const alone = await c.until(
      'the survivor leads every partition alone',
      async () => {
        const v = await c.topic('lonely')
        return v && v.partitions.every((p) => p.leaderId === survivor && p.isr.length === 1 && p.isr[0] === survivor) ? v : null
      },
      30_000,
    )
    expect(alone.partitions.map((p) => p.isr)).toEqual([[survivor], [survivor], [survivor]])

    // acks=all: refused by the broker (no retries, so the error is the broker's own).
    const all = new CheckedProducer(c.bootstrap, 'lonely', join(work, 'all.acks'), { max: 6, rate: 100, idempotent: false, retries: 0, prefix: 'all-' })
    await all.stop(60_000)
    expect(all.acked).toBe(0)
    expect(all.errors.map((e) => e.exception)).toEqual(Array(6).fill('org.apache.kafka.common.errors.NotEnoughReplicasException'))

    // acks=1: taken.
    const one = new CheckedProducer(c.bootstrap, 'lonely', join(work, 'one.acks'), { max: 30, rate: 100, acks: '1', idempotent: false, retries: 0, prefix: 'one-' })
    await one.waitForAcks(30)
    await one.stop(60_000)
    expect(one.errors).toEqual([])

    // The others come back, catch up and rejoin; everything acknowledged is there once.
    for (const b of c.nodes.filter((n) => n.nodeId !== survivor)) await b.start()
    await c.waitForFullIsr('lonely')
    const report = await verifyTopic(c.bootstrap, 'lonely', [first.outFile, one.outFile])
    expect({ lost: report.lost, duplicates: report.duplicates, reused: report.reused }).toEqual({ lost: [], duplicates: [], reused: [] })
    expect(report.acked).toBe(330)
    expect(c.unexpectedExits()).toEqual([])
  }, 240_000)
})
