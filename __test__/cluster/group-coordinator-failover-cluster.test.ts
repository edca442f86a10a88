/**
 * Coordinator failover mid-rebalance (issue 27's "What it must show"), on three broker processes
 * and a real etcd: a classic group and a KIP-848 consumer group of ferrolog's Consumer, two
 * members each, consume a replicated topic and commit; a third member joins each group and, while
 * both groups rebalance (a member of each is giving up partitions for it, held in its
 * onPartitionsRevoked), the leader of the groups' `__consumer_offsets` partition (both groups
 * hash to it) is SIGKILLed. Another broker loads the partition (the groups' records, their offsets) and the
 * groups go on: every record is read (none missing), the committed offsets reach the end of the
 * topic, and each group ends Stable with its three members.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { OFFSETS_TOPIC } from '../../ts/group/offsets-topic.js'
import { endOffsets, produceNumbered } from '../client/consumer-scenarios.js'
import { FERROLOG_GROUP_CONFIG, groupOptions, until, type Protocol } from '../client/group-protocol-scenarios.js'
import { ClusterProcesses } from '../helpers/cluster-processes.js'

const TOPIC = 'failover-jobs'
const PARTITIONS = 6
/** Records produced before the failover, and as many after it. */
const PER_ROUND = Number(process.env.FERROLOG_FAILOVER_RECORDS ?? 200)
const CLASSIC_GROUP = 'failover-classic'
/** A consumer group id on the same `__consumer_offsets` partition as the classic group's. */
const CONSUMER_GROUP = Array.from({ length: 1000 }, (_, i) => `failover-consumer-${i}`).find((g) => partitionFor(g, 50) === partitionFor(CLASSIC_GROUP, 50))!

let cluster: ClusterProcesses | undefined
const consumers: Consumer[] = []

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.close().catch(() => undefined)))
  if (cluster && cluster.unexpectedExits().length > 0) console.error(cluster.logTails())
  await cluster?.close()
  cluster = undefined
})

/** A group's members, what they read (record value → times read), and how to add one. */
class Group {
  readonly seen = new Map<string, number>()
  readonly members: Consumer[] = []
  private readonly loops: Array<Promise<void>> = []

  constructor(
    readonly groupId: string,
    readonly protocol: Protocol,
    private readonly bootstrap: string,
    /** Awaited by a member giving up partitions (before it rejoins, or acknowledges the revocation). */
    private readonly onRevoked: () => Promise<void>,
  ) {}

  start(): Consumer {
    const c = new Consumer({
      bootstrapServers: this.bootstrap,
      groupId: this.groupId,
      clientId: `${this.groupId}-${this.members.length}`,
      ...groupOptions(this.protocol),
      'enable.auto.commit': false,
      onPartitionsRevoked: () => this.onRevoked(),
    })
    consumers.push(c)
    this.members.push(c)
    c.subscribe([TOPIC])
    this.loops.push(
      (async () => {
        for await (const batch of c) {
          for (const r of batch.records) {
            const value = r.value!.toString().replace(/\.+$/, '')
            this.seen.set(value, (this.seen.get(value) ?? 0) + 1)
          }
          // Committed after each batch; a commit refused by a rebalance is made again by the next batch's.
          await c.commit().catch(() => undefined)
        }
      })(),
    )
    return c
  }

  missing(count: number): string[] {
    const out: string[] = []
    for (const round of ['before', 'after']) for (let i = 0; i < count; i++) if (!this.seen.has(`${round}-${i}`)) out.push(`${round}-${i}`)
    return out
  }

  async committed(): Promise<string[]> {
    const checker = new Consumer({ bootstrapServers: this.bootstrap, groupId: this.groupId })
    try {
      const c = await checker.committed(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition })))
      return Array.from({ length: PARTITIONS }, (_, p) => String(c.get(`${TOPIC}\u0000${p}`)))
    } finally {
      await checker.close()
    }
  }
}

describe('group coordinator failover mid-rebalance', () => {
  it('the leader of the groups’ offsets partition SIGKILLed while a member joins: both groups go on, every record read, offsets intact', async () => {
    const c = (cluster = await ClusterProcesses.start({ brokers: 3, props: FERROLOG_GROUP_CONFIG }))
    await c.createTopic(TOPIC, { partitions: PARTITIONS, replicationFactor: 3 })
    const bootstrap = c.bootstrap
    await produceNumbered(bootstrap, TOPIC, 'before', PER_ROUND)
    // Once armed, the first member of each group to give up partitions for the third member
    // waits there; when both groups are so in the middle of their rebalance, the coordinator is
    // SIGKILLed, and they go on.
    let armed = false
    const rebalancing = new Set<string>()
    let kill: Promise<void> | null = null
    let coordinator = -1
    const onRevoked = (groupId: string) => async () => {
      if (!armed) return
      rebalancing.add(groupId)
      if (rebalancing.size === 2 && kill === null) kill = c.node(coordinator).kill()
      await until(() => kill !== null, 'both groups to rebalance', 60_000)
      await kill
    }
    const groups = [new Group(CLASSIC_GROUP, 'classic', bootstrap, onRevoked(CLASSIC_GROUP)), new Group(CONSUMER_GROUP, 'consumer', bootstrap, onRevoked(CONSUMER_GROUP))]
    for (const g of groups) {
      g.start()
      g.start()
    }
    await until(() => groups.every((g) => g.seen.size === PER_ROUND), 'both groups to read the first records', 120_000)
    const firstEnds = (await endOffsets(bootstrap, TOPIC, PARTITIONS)).map(String)
    for (const g of groups) await c.until(`${g.groupId} to commit the first records`, async () => JSON.stringify(await g.committed()) === JSON.stringify(firstEnds), 60_000)
    await c.waitForFullIsr(OFFSETS_TOPIC)
    const offsetsPartition = partitionFor(CLASSIC_GROUP, 50)
    coordinator = (await c.topic(OFFSETS_TOPIC))!.partitions[offsetsPartition]!.leaderId

    // A third member joins each group; the coordinator dies during the rebalances it starts.
    armed = true
    for (const g of groups) g.start()
    await until(() => kill !== null, 'the coordinator to be killed mid-rebalance', 60_000)
    await kill
    armed = false
    await c.until('the offsets partition led elsewhere', async () => {
      const leader = (await c.topic(OFFSETS_TOPIC))?.partitions[offsetsPartition]?.leaderId
      return leader !== undefined && leader > 0 && leader !== coordinator
    })
    // The new coordinator has the committed offsets (nothing new was produced meanwhile).
    for (const g of groups) expect(await g.committed(), g.groupId).toEqual(firstEnds)
    await produceNumbered(bootstrap, TOPIC, 'after', PER_ROUND)

    await until(() => groups.every((g) => g.seen.size === 2 * PER_ROUND), 'both groups to read every record', 120_000)
    for (const g of groups) expect(g.missing(PER_ROUND), g.groupId).toEqual([])
    const ends = (await endOffsets(bootstrap, TOPIC, PARTITIONS)).map(String)
    for (const g of groups) {
      // The members commit what they read: the committed offsets reach the end of every partition.
      await c.until(`${g.groupId} to commit every record`, async () => JSON.stringify(await g.committed()) === JSON.stringify(ends), 60_000)
      // Every member ends with a share of the partitions, each partition owned once.
      const owned = () => g.members.flatMap((m) => m.assignment().map((tp) => tp.partition))
      await until(() => g.members.every((m) => m.assignment().length > 0) && new Set(owned()).size === PARTITIONS && owned().length === PARTITIONS, `${g.groupId}: every member assigned`, 60_000)
    }
    expect(c.unexpectedExits()).toEqual([])
  }, 300_000)
})
