/**
 * The Consumer's scenarios, run against any Kafka-speaking broker (ferrolog's in-process broker
 * in consumer.test.ts, Apache Kafka in consumer-kafka.test.ts): a group of consumers joining and
 * leaving over 12 partitions, seek, pause/resume, a pattern subscription that picks up a topic
 * created later, static membership, a member that overstays max.poll.interval.ms, unsubscribe.
 */
import { expect } from 'vitest'
import { Consumer, type ConsumerBatch, type ConsumerConstructorOptions } from '../../ts/client/consumer.js'
import { CommitFailedError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { describeGroupsCodec, type DescribedGroup } from '../../ts/protocol/apis/describe-groups.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { listOffsetsCodec, ListOffsetsTimestamp } from '../../ts/protocol/apis/list-offsets.js'

/** Settings that make rebalances quick in a test (the broker's minimum session is 6 s). */
export const FAST_GROUP = {
  'session.timeout.ms': 10_000,
  'heartbeat.interval.ms': 200,
  'max.poll.interval.ms': 30_000,
  'fetch.max.wait.ms': 200,
  'auto.offset.reset': 'earliest',
} as const

export async function createTopic(bootstrap: string, name: string, partitions: number): Promise<void> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await client.refreshMetadata(null)
    const r = await client.request(client.candidateNodes()[0], createTopicsCodec, {
      topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 30_000,
      validateOnly: false,
    })
    expect(r.topics[0].errorCode).toBe(0)
    for (let i = 0; i < 200; i++) {
      const md = await client.refreshMetadata([name])
      if (md.topic(name)?.partitions.length === partitions && md.topic(name)!.partitions.every((p) => p.leaderId >= 0)) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`${name} has no leaders`)
  } finally {
    await client.close()
  }
}

/** Produces `count` records with values `${prefix}-${i}` (keys i), spread over the partitions by key. */
export async function produceNumbered(bootstrap: string, topic: string, prefix: string, count: number): Promise<void> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    const chunk = 5000
    for (let from = 0; from < count; from += chunk) {
      const records = []
      for (let i = from; i < Math.min(count, from + chunk); i++) records.push({ key: String(i), value: `${prefix}-${i}`.padEnd(100, '.') })
      await produce(client, topic, records, { compression: 'lz4' })
    }
  } finally {
    await client.close()
  }
}

/** The group's committed offsets summed with the end offsets (to check that every record was committed). */
export async function endOffsets(bootstrap: string, topic: string, partitions: number): Promise<bigint[]> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await client.refreshMetadata([topic])
    const out: bigint[] = []
    for (let p = 0; p < partitions; p++) {
      const leader = client.metadata.leaderFor(topic, p)!.nodeId
      const r = await client.request(leader, listOffsetsCodec, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: topic, partitions: [{ partitionIndex: p, currentLeaderEpoch: -1, timestamp: ListOffsetsTimestamp.LATEST, maxNumOffsets: 1 }] }],
      })
      out.push(r.topics[0].partitions[0].offset)
    }
    return out
  } finally {
    await client.close()
  }
}

const until = async (check: () => boolean, what: string, limitMs = 60_000) => {
  const end = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Three consumers over 12 partitions: A starts, B joins after a fifth of the records, C after
 * two fifths, A leaves (close: commit, LeaveGroup) after three fifths, then B and C read the
 * rest. Every record is processed exactly once (no crashes: commits before each revoke), and the
 * group's committed offsets end at the log ends.
 */
export async function groupJoinLeaveScenario(bootstrap: string, topic: string, count: number, options: Partial<ConsumerConstructorOptions> = {}): Promise<{ rebalances: number; perMember: number[] }> {
  await createTopic(bootstrap, topic, 12)
  await produceNumbered(bootstrap, topic, 'r', count)
  const groupId = `${topic}-group`
  const seen = new Map<string, number>()
  const perMember = [0, 0, 0]
  let rebalances = 0
  const consumers: Consumer[] = []
  const loops: Promise<void>[] = []
  const start = (i: number) => {
    const c = new Consumer({
      bootstrapServers: bootstrap,
      groupId,
      ...FAST_GROUP,
      'max.poll.records': 100,
      'max.partition.fetch.bytes': 16_384,
      onPartitionsAssigned: () => {
        rebalances++
      },
      ...options,
    })
    c.subscribe([topic])
    consumers[i] = c
    loops[i] = (async () => {
      for await (const batch of c) {
        for (const r of batch.records) {
          const id = r.value!.toString().replace(/\.+$/, '')
          seen.set(id, (seen.get(id) ?? 0) + 1)
        }
        perMember[i] += batch.records.length
        // Work on the batch (so that members join and leave while there is work left).
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
  }
  start(0)
  await until(() => seen.size >= count / 5, 'a fifth of the records')
  start(1)
  await until(() => seen.size >= (2 * count) / 5 && perMember[1] > 0, 'B to read')
  start(2)
  await until(() => seen.size >= (3 * count) / 5 && perMember[2] > 0, 'C to read')
  await consumers[0].close()
  await loops[0]
  await until(() => seen.size >= count, 'every record', 90_000)
  // Let the last auto-commits happen through close.
  await Promise.all([consumers[1].close(), consumers[2].close()])
  await Promise.all(loops)

  const missing = []
  const duplicated = []
  for (let i = 0; i < count; i++) {
    const n = seen.get(`r-${i}`) ?? 0
    if (n === 0) missing.push(i)
    if (n > 1) duplicated.push(i)
  }
  expect(missing).toEqual([])
  expect(duplicated).toEqual([])
  expect(seen.size).toBe(count)

  // The committed offsets are the ends of the logs.
  const ends = await endOffsets(bootstrap, topic, 12)
  const checker = new Consumer({ bootstrapServers: bootstrap, groupId })
  try {
    const committed = await checker.committed(Array.from({ length: 12 }, (_, partition) => ({ topic, partition })))
    expect([...Array(12).keys()].map((p) => committed.get(`${topic}\u0000${p}`))).toEqual(ends)
  } finally {
    await checker.close()
  }
  return { rebalances, perMember }
}

async function pollUntil(c: Consumer, done: (all: ConsumerBatch[]) => boolean, limit = 200): Promise<ConsumerBatch[]> {
  const all: ConsumerBatch[] = []
  for (let i = 0; i < limit && !done(all); i++) all.push(...(await c.poll(500)))
  return all
}

const count = (batches: ConsumerBatch[]) => batches.reduce((n, b) => n + b.records.length, 0)

/** assign + seek: back to an earlier offset and forward past records, with a prefetch in flight. */
export async function seekScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 1)
  await produceNumbered(bootstrap, topic, 's', 50)
  const c = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', maxPollRecords: 10, fetchMaxWaitMs: 100 })
  try {
    c.assign([{ topic, partition: 0 }])
    const first = await pollUntil(c, (b) => count(b) >= 10)
    expect(first.flatMap((b) => b.records.map((r) => r.offset))).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)))
    expect(c.position(topic, 0)).toBe(10n)
    // The next fetch went out with the batch above; a seek makes its data stale.
    c.seek(topic, 0, 3n)
    const again = await pollUntil(c, (b) => count(b) >= 1)
    expect(again[0].records[0].offset).toBe(3n)
    expect(again[0].records[0].value!.toString()).toMatch(/^s-\d+\.*$/)
    c.seek(topic, 0, 45n)
    const tail = await pollUntil(c, (b) => count(b) >= 5)
    expect(tail.flatMap((b) => b.records.map((r) => r.offset))).toEqual([45n, 46n, 47n, 48n, 49n])
    // Offsets given to assign.
    c.assign([{ topic, partition: 0, offset: 20n }])
    const from20 = await pollUntil(c, (b) => count(b) >= 1)
    expect(from20[0].records[0].offset).toBe(20n)
  } finally {
    await c.close()
  }
}

/** pause keeps a partition assigned but returns none of its records until resume. */
export async function pauseResumeScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 2)
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await produce(
      client,
      topic,
      Array.from({ length: 20 }, (_, i) => ({ value: `p0-${i}` })),
      { partition: 0 },
    )
    await produce(
      client,
      topic,
      Array.from({ length: 20 }, (_, i) => ({ value: `p1-${i}` })),
      { partition: 1 },
    )
  } finally {
    await client.close()
  }
  const c = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', 'fetch.max.wait.ms': 100 })
  try {
    c.assign([
      { topic, partition: 0 },
      { topic, partition: 1 },
    ])
    c.pause([{ topic, partition: 0 }])
    expect(c.paused()).toEqual([{ topic, partition: 0 }])
    const got = await pollUntil(c, (b) => count(b) >= 20)
    expect(got.every((b) => b.partition === 1)).toBe(true)
    // Polls while paused bring nothing of partition 0.
    for (let i = 0; i < 3; i++) expect((await c.poll(200)).filter((b) => b.partition === 0)).toEqual([])
    c.resume([{ topic, partition: 0 }])
    const rest = await pollUntil(c, (b) => count(b) >= 20)
    expect(rest.flatMap((b) => b.records.map((r) => r.value!.toString()))).toEqual(Array.from({ length: 20 }, (_, i) => `p0-${i}`))
  } finally {
    await c.close()
  }
}

/** A RegExp subscription picks up a topic created after the consumer joined. */
export async function regexScenario(bootstrap: string, prefix: string): Promise<void> {
  await createTopic(bootstrap, `${prefix}-a`, 2)
  await produceNumbered(bootstrap, `${prefix}-a`, 'a', 10)
  const c = new Consumer({ bootstrapServers: bootstrap, groupId: `${prefix}-group`, ...FAST_GROUP, 'metadata.max.age.ms': 300 })
  const values = new Set<string>()
  const topics = new Set<string>()
  try {
    c.subscribe(new RegExp(`^${prefix}-.*`))
    const loop = (async () => {
      for await (const b of c) {
        topics.add(b.topic)
        for (const r of b.records) values.add(r.value!.toString().replace(/\.+$/, ''))
      }
    })()
    await until(() => values.size >= 10, 'the first topic')
    await createTopic(bootstrap, `${prefix}-b`, 3)
    await produceNumbered(bootstrap, `${prefix}-b`, 'b', 10)
    await until(() => values.size >= 20, 'the topic created later')
    expect([...topics].sort()).toEqual([`${prefix}-a`, `${prefix}-b`])
    expect(c.assignment().filter((tp) => tp.topic === `${prefix}-b`).length).toBe(3)
    await c.close()
    await loop
  } finally {
    await c.close()
  }
}

/**
 * Static membership (group.instance.id): a static member that closes sends no LeaveGroup, so the
 * other member keeps its partitions (no rebalance); the same instance restarted gets its
 * partitions back without a rebalance; a second process with the same id fences the first
 * (FENCED_INSTANCE_ID).
 */
export async function staticMembershipScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 4)
  await produceNumbered(bootstrap, topic, 'st', 40)
  const groupId = `${topic}-group`
  const assignments: Record<string, string[][]> = { i1: [], i2: [] }
  const make = (instance: string) =>
    new Consumer({
      bootstrapServers: bootstrap,
      groupId,
      'group.instance.id': instance,
      ...FAST_GROUP,
      onPartitionsAssigned: (tps) => {
        assignments[instance].push(tps.map((tp) => `${tp.topic}-${tp.partition}`).sort())
      },
    })
  const errors = new Map<Consumer, unknown>()
  const pump = (c: Consumer) => {
    let stopped = false
    const done = (async () => {
      while (!stopped) {
        try {
          await c.poll(200)
        } catch (err) {
          errors.set(c, err)
          return
        }
      }
    })()
    return async () => {
      stopped = true
      await done
    }
  }
  const c1 = make('i1')
  c1.subscribe([topic])
  const stop1 = pump(c1)
  await until(() => assignments.i1.length > 0, 'i1 assigned')
  const c2 = make('i2')
  c2.subscribe([topic])
  const stop2 = pump(c2)
  await until(() => assignments.i2.length > 0 && c1.assignment().length === 2 && c2.assignment().length === 2, 'both hold two partitions')
  const i1Partitions = c1
    .assignment()
    .map((tp) => `${tp.topic}-${tp.partition}`)
    .sort()
  const i2Rebalances = assignments.i2.length
  await stop1()
  await c1.close()
  // i1 restarts within session.timeout.ms: its partitions back, and i2 saw no rebalance.
  const c1b = make('i1')
  c1b.subscribe([topic])
  const stop1b = pump(c1b)
  await until(() => c1b.assignment().length === 2, 'the restarted i1 assigned')
  expect(
    c1b
      .assignment()
      .map((tp) => `${tp.topic}-${tp.partition}`)
      .sort(),
  ).toEqual(i1Partitions)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  expect(assignments.i2.length).toBe(i2Rebalances)
  // Another process with i2's id: the older one is fenced.
  const c2b = make('i2')
  c2b.subscribe([topic])
  const stop2b = pump(c2b)
  await until(() => errors.has(c2), 'the first i2 fenced')
  await stop2()
  const fenced = errors.get(c2)
  expect(fenced).toBeInstanceOf(Error)
  expect((fenced as { code?: string }).code).toBe('FENCED_INSTANCE_ID')
  await stop1b()
  await stop2b()
  await Promise.all([c1b.close(), c2.close(), c2b.close()])
}

const tpKeys = (c: Consumer) =>
  c
    .assignment()
    .map((tp) => `${tp.topic}-${tp.partition}`)
    .sort()

/** The group's committed offsets of a topic's partitions, as a list by partition. */
async function committedOffsets(bootstrap: string, groupId: string, topic: string, partitions: number): Promise<Array<bigint | undefined>> {
  const checker = new Consumer({ bootstrapServers: bootstrap, groupId })
  try {
    const committed = await checker.committed(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })))
    return [...Array(partitions).keys()].map((p) => committed.get(`${topic}\u0000${p}`))
  } finally {
    await checker.close()
  }
}

/**
 * max.poll.interval.ms: two members over 4 partitions; A stalls in its eachBatch beyond
 * max.poll.interval.ms (3 s). A's heartbeat leaves the group (LeaveGroup), so B gets all 4
 * partitions while A still stalls; A's commit then fails with CommitFailedError
 * (ILLEGAL_GENERATION) and its partitions are lost (onPartitionsLost, no commit); A's next poll
 * rejoins and the two share the partitions again. Every record is read (at least once: A's
 * stalled batch is read again by B), and the committed offsets end at the log ends.
 */
export async function pollTimeoutScenario(bootstrap: string, topic: string): Promise<void> {
  const partitions = 4
  await createTopic(bootstrap, topic, partitions)
  await produceNumbered(bootstrap, topic, 'r', 2000)
  const groupId = `${topic}-group`
  const seen = new Map<string, number>()
  const record = (batch: ConsumerBatch) => {
    for (const r of batch.records) {
      const id = r.value!.toString().replace(/\.+$/, '')
      seen.set(id, (seen.get(id) ?? 0) + 1)
    }
  }
  const lost: string[][] = []
  const revokedA: string[][] = []
  const options = {
    bootstrapServers: bootstrap,
    groupId,
    ...FAST_GROUP,
    'max.poll.interval.ms': 3000,
    'max.poll.records': 50,
    'max.partition.fetch.bytes': 4096,
  }
  const a = new Consumer({
    ...options,
    onPartitionsLost: (tps) => {
      lost.push(tps.map((tp) => `${tp.topic}-${tp.partition}`).sort())
    },
    onPartitionsRevoked: (tps) => {
      revokedA.push(tps.map((tp) => `${tp.topic}-${tp.partition}`).sort())
    },
  })
  const b = new Consumer(options)
  let stalled = false
  let revokedAtStall = -1
  let commitError: unknown = null
  let bStarted = false
  let bLoop: Promise<void> | null = null
  a.subscribe([topic])
  const aLoop = a.run({
    eachBatch: async (batch) => {
      record(batch)
      if (!bStarted) {
        bStarted = true
        b.subscribe([topic])
        bLoop = (async () => {
          for await (const batch of b) {
            record(batch)
            await new Promise((resolve) => setTimeout(resolve, 10))
          }
        })()
      }
      if (!stalled && a.assignment().length === 2 && b.assignment().length === 2) {
        stalled = true
        revokedAtStall = revokedA.length
        // Away from poll() until B holds every partition: only A leaving the group gets it there.
        try {
          await until(() => b.assignment().length === partitions, 'B to take every partition while A stalls', 60_000)
          await a.commit()
        } catch (err) {
          // CommitFailedError expected; a timeout above fails the test just as well.
          commitError = err
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 10))
    },
  })
  await until(() => stalled && commitError !== null, 'A to stall and try to commit', 90_000)
  expect(commitError).toBeInstanceOf(CommitFailedError)
  expect((commitError as CommitFailedError).code).toBe('ILLEGAL_GENERATION')
  // A rejoins: the two share the partitions again.
  await until(() => a.assignment().length === 2 && b.assignment().length === 2, 'A to rejoin', 60_000)
  expect(lost.length).toBe(1)
  expect(lost[0].length).toBe(2)
  // Lost, not revoked: no revoke callback since the stall.
  expect(revokedA.length).toBe(revokedAtStall)
  await produceNumbered(bootstrap, topic, 's', 200)
  await until(() => [...Array(2000).keys()].every((i) => seen.has(`r-${i}`)) && [...Array(200).keys()].every((i) => seen.has(`s-${i}`)), 'every record', 90_000)
  await Promise.all([a.close(), b.close()])
  await aLoop
  await bLoop
  expect(await committedOffsets(bootstrap, groupId, topic, partitions)).toEqual(await endOffsets(bootstrap, topic, partitions))
}

/** The group as its coordinator describes it (DescribeGroups). */
async function describeGroup(bootstrap: string, groupId: string): Promise<DescribedGroup> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await client.refreshMetadata([])
    const found = await client.request(client.candidateNodes()[0], findCoordinatorCodec, (v) =>
      v >= 4 ? { key: '', keyType: CoordinatorType.GROUP, coordinatorKeys: [groupId] } : { key: groupId, keyType: CoordinatorType.GROUP, coordinatorKeys: [] },
    )
    const nodeId = found.coordinators.length > 0 ? found.coordinators[0].nodeId : found.nodeId
    const res = await client.request(nodeId, describeGroupsCodec, { groups: [groupId], includeAuthorizedOperations: false })
    return res.groups[0]
  } finally {
    await client.close()
  }
}

/**
 * unsubscribe(): the member gives its partitions up (onPartitionsRevoked), sends LeaveGroup and
 * stops fetching; the other member gets every partition at once, long before the departed
 * member's session (60 s) would have timed out. A static member (group.instance.id) sends no
 * LeaveGroup, as in Kafka: it stays in the group and keeps its partitions for its session.
 */
export async function unsubscribeScenario(bootstrap: string, topic: string, staticMembers = false): Promise<void> {
  const partitions = 4
  await createTopic(bootstrap, topic, partitions)
  await produceNumbered(bootstrap, topic, 'u', 100)
  const groupId = `${topic}-group`
  const revokedB: string[][] = []
  const options = { bootstrapServers: bootstrap, groupId, ...FAST_GROUP, 'session.timeout.ms': 60_000 }
  const a = new Consumer({ ...options, 'group.instance.id': staticMembers ? 'a' : null })
  const b = new Consumer({ ...options, 'group.instance.id': staticMembers ? 'b' : null, onPartitionsRevoked: (tps) => void revokedB.push(tps.map((tp) => `${tp.topic}-${tp.partition}`).sort()) })
  const pump = (c: Consumer) => {
    let stopped = false
    const done = (async () => {
      while (!stopped) await c.poll(100)
    })()
    return async () => {
      stopped = true
      await done
    }
  }
  a.subscribe([topic])
  b.subscribe([topic])
  const stopA = pump(a)
  const stopB = pump(b)
  try {
    await until(() => a.assignment().length === 2 && b.assignment().length === 2, 'both hold two partitions')
    const bHeld = tpKeys(b)
    await stopB()
    const revocations = revokedB.length
    await b.unsubscribe()
    expect(b.assignment()).toEqual([])
    expect(revokedB.slice(revocations)).toEqual([bHeld])
    const group = await describeGroup(bootstrap, groupId)
    if (staticMembers) {
      // No LeaveGroup: b is still a member, and A keeps its two partitions.
      expect(group.members.map((m) => m.groupInstanceId).sort()).toEqual(['a', 'b'])
      expect(a.assignment().length).toBe(2)
      return
    }
    // The coordinator took B out at its LeaveGroup.
    expect(group.members.length).toBe(1)
    // Well within the 60 s session: only a LeaveGroup makes the group rebalance this early.
    await until(() => a.assignment().length === partitions, 'A to take every partition', 30_000)
    // Unsubscribed: polls join nothing and fetch nothing.
    expect(await b.poll(300)).toEqual([])
    expect(b.assignment()).toEqual([])
  } finally {
    await stopA()
    await stopB()
    await Promise.all([a.close(), b.close()])
  }
}
