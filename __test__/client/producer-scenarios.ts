/**
 * The Producer's scenarios, run against any Kafka-speaking broker (ferrolog in producer.test.ts,
 * Apache Kafka 4.4 in producer-kafka.test.ts), with the same expectations on both:
 *
 *   - records of every codec, keyed and keyless, with headers, each promise resolving to the
 *     offset the record has when read back; keyed records on murmur2's partition;
 *   - per-record errors: a record above max.request.size, one the broker refuses as larger than
 *     the topic's max.message.bytes (its batch split, the others written), an unknown topic: each
 *     fails alone with Kafka's error, every other record is written once;
 *   - a broker SIGKILLed and restarted mid-produce (idempotence): every record acknowledged,
 *     each read back exactly once, in the order sent per partition;
 *   - in a 3-broker cluster, a partition's leader SIGKILLed mid-produce over 12 partitions RF=3
 *     (idempotence, acks=all): every record acknowledged at the offset it is read at, each read
 *     back exactly once, in the order sent per partition;
 *   - transactions: a copy from one topic to another with sendOffsetsToTransaction, an aborted
 *     transaction in between; a read_committed Consumer reads every record exactly once and the
 *     group's committed offsets are the input's end.
 */
import { expect } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { KafkaClientError, RecordTooLargeError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { partitionForKey } from '../../ts/client/partitioner.js'
import { Producer, type RecordMetadata } from '../../ts/client/producer.js'
import type { ConsumerRecord } from '../../ts/client/consumer-record.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'

export async function createTopic(bootstrap: string, name: string, partitions: number, configs: Record<string, string> = {}, replicationFactor = 1): Promise<void> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await client.refreshMetadata(null)
    const r = await client.request(client.candidateNodes()[0]!, createTopicsCodec, {
      topics: [{ name, numPartitions: partitions, replicationFactor, assignments: [], configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) }],
      timeoutMs: 30_000,
      validateOnly: false,
    })
    expect(r.topics[0]!.errorCode).toBe(0)
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

/** Every record of `topic`'s partitions from the start, until `count` were read (or 60 s). */
export async function readAll(bootstrap: string, topic: string, partitions: number, count: number, isolation: 'read_committed' | 'read_uncommitted' = 'read_uncommitted'): Promise<ConsumerRecord[]> {
  const consumer = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', 'isolation.level': isolation, 'fetch.max.wait.ms': 100 })
  const out: ConsumerRecord[] = []
  try {
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })))
    const deadline = Date.now() + 60_000
    while (out.length < count && Date.now() < deadline) for (const b of await consumer.poll(500)) out.push(...b.records)
    // a little longer: nothing more may come
    for (const b of await consumer.poll(300)) out.push(...b.records)
  } finally {
    await consumer.close()
  }
  return out
}

const str = (b: Buffer | null) => (b === null ? null : b.toString())

export async function everyCodecScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 3)
  const sent: Array<{ key: string | null; value: string; codec: string; md: Promise<RecordMetadata> }> = []
  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    const producer = new Producer({ bootstrapServers: bootstrap, 'compression.type': codec, 'linger.ms': 20 })
    try {
      for (let i = 0; i < 400; i++) {
        const key = i % 3 === 0 ? null : `k${i}`
        const value = `${codec}-${i}-`.padEnd(50 + (i % 200), 'x')
        sent.push({ key, value, codec, md: producer.send({ topic, key, value, headers: [{ key: 'codec', value: codec }] }) })
      }
      await producer.flush()
    } finally {
      await producer.close()
    }
  }
  const metas = await Promise.all(sent.map((s) => s.md))
  const back = await readAll(bootstrap, topic, 3, sent.length)
  expect(back.length).toBe(sent.length)
  const at = new Map(back.map((r) => [`${r.partition}/${r.offset}`, r]))
  sent.forEach((s, i) => {
    const md = metas[i]!
    expect(md.topic).toBe(topic)
    if (s.key !== null) expect(md.partition).toBe(partitionForKey(Buffer.from(s.key), 3))
    const r = at.get(`${md.partition}/${md.offset}`)!
    expect(str(r.value)).toBe(s.value)
    expect(str(r.key)).toBe(s.key)
    expect(r.headers.map((h) => [h.key, str(h.value)])).toEqual([['codec', s.codec]])
    expect(r.timestamp).toBe(md.timestamp)
  })
}

export async function perRecordErrorsScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 1, { 'max.message.bytes': '2000' })
  const producer = new Producer({ bootstrapServers: bootstrap, 'linger.ms': 50, 'max.request.size': 100_000, 'max.block.ms': 3000 })
  try {
    const outcome = (p: Promise<RecordMetadata>) =>
      p.then(
        (md) => ({ ok: true as const, md }),
        (err: unknown) => ({ ok: false as const, err }),
      )
    const results = []
    for (let i = 0; i < 30; i++) {
      // record 10: above the topic's max.message.bytes, not the producer's max.request.size;
      // record 20: above max.request.size
      const value = i === 10 ? 'b'.repeat(5000) : i === 20 ? 'c'.repeat(200_000) : `small-${i}`
      results.push(outcome(producer.send({ topic, value })))
      if (i === 15) results.push(outcome(producer.send({ topic: `${topic}-does-not-exist`, value: 'lost' })))
    }
    const all = await Promise.all(results)
    const failed = all.flatMap((r, i) => (r.ok ? [] : [{ i, err: r.err }]))
    expect(
      failed.map((f) => f.i),
      failed.map((f) => String(f.err)).join('\n'),
    ).toEqual([10, 16, 21])
    const [big, unknown, huge] = failed.map((f) => f.err)
    expect(big).toBeInstanceOf(RecordTooLargeError)
    expect((big as RecordTooLargeError).errorCode).toBe(10)
    expect(unknown).toBeInstanceOf(KafkaClientError)
    expect((unknown as KafkaClientError).code).toBe('UNKNOWN_TOPIC_OR_PARTITION')
    expect(huge).toBeInstanceOf(RecordTooLargeError)
    expect((huge as RecordTooLargeError).code).toBe('MESSAGE_TOO_LARGE')
    const back = await readAll(bootstrap, topic, 1, 28)
    expect(back.map((r) => str(r.value))).toEqual(
      Array.from({ length: 30 }, (_, i) => i)
        .filter((i) => i !== 10 && i !== 20)
        .map((i) => `small-${i}`),
    )
    // the offsets the promises gave are where the records are
    const offsets = all.filter((r) => r.ok).map((r) => (r.ok ? r.md.offset : -1n))
    expect(offsets).toEqual(back.map((r) => r.offset))
  } finally {
    await producer.close()
  }
}

/**
 * Produces `count` keyed records over `partitions` while `crash()` kills the broker and brings it
 * back (same address); every record must be acknowledged and read back once, in order.
 */
export async function restartScenario(bootstrap: () => string, topic: string, partitions: number, count: number, crash: () => Promise<void>): Promise<void> {
  await createTopic(bootstrap(), topic, partitions)
  const producer = new Producer({
    bootstrapServers: bootstrap(),
    'linger.ms': 2,
    'batch.size': 4096,
    'request.timeout.ms': 5000,
    'delivery.timeout.ms': 120_000,
  })
  const acks: Array<Promise<RecordMetadata>> = []
  let acked = 0
  let crashed: Promise<number> | null = null
  try {
    for (let i = 0; i < count; i++) {
      acks.push(producer.send({ topic, key: `key-${i % 97}`, value: `v-${i}` }).then((md) => (acked++, md)))
      if (i === Math.floor(count / 3)) {
        crashed = (async () => {
          const unacknowledged = i + 1 - acked
          await crash()
          return unacknowledged
        })()
      }
      if (i % 200 === 0) {
        await producer.waitForBufferSpace()
        await new Promise((resolve) => setImmediate(resolve))
      }
      if (i % 2000 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    }
    // records were on their way when the broker died
    expect(await crashed).toBeGreaterThan(0)
    const metas = await Promise.all(acks)
    expect(metas.length).toBe(count)
  } finally {
    await producer.close()
  }
  const back = await readAll(bootstrap(), topic, partitions, count)
  const values = back.map((r) => str(r.value)!)
  expect(new Set(values).size).toBe(values.length) // none duplicated
  expect(values.length).toBe(count) // none lost
  // per key (so per partition) in the order sent
  const lastIndex = new Map<string, number>()
  for (const r of back) {
    const i = Number(str(r.value)!.slice(2))
    const key = str(r.key)!
    expect(i).toBeGreaterThan(lastIndex.get(key) ?? -1)
    lastIndex.set(key, i)
  }
}

/** A cluster of three brokers a scenario can crash one of. */
export interface CrashableCluster {
  bootstrap: string
  /** SIGKILL of broker `id`. */
  kill(id: number): Promise<void> | void
}

/** The leader of `topic`'s partition `partition` as Metadata tells it. */
async function leaderOf(bootstrap: string, topic: string, partition: number): Promise<number> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    const leader = (await client.refreshMetadata([topic])).topic(topic)?.partitions.find((p) => p.partition === partition)?.leaderId
    if (leader === undefined || leader < 0) throw new Error(`${topic}-${partition} has no leader`)
    return leader
  } finally {
    await client.close()
  }
}

/**
 * Produces `count` keyed records over 12 partitions (RF=3, min.insync.replicas=2) of a 3-broker
 * cluster, idempotent and acks=all, and SIGKILLs the leader of partition 0 once a third was
 * acknowledged; every record must be acknowledged at the partition and offset it is read back at, once,
 * in the order sent per partition. Returns the figures for the note.
 */
export async function leaderKillScenario(cluster: CrashableCluster, topic: string, count: number): Promise<{ killed: number; unacknowledgedAtKill: number; ms: number }> {
  const partitions = 12
  await createTopic(cluster.bootstrap, topic, partitions, { 'min.insync.replicas': '2' }, 3)
  // A small buffer.memory paces the sends by the acknowledgements, so that the crash comes mid-stream.
  const producer = new Producer({ bootstrapServers: cluster.bootstrap, acks: 'all', 'linger.ms': 5, 'buffer.memory': 256 * 1024, 'delivery.timeout.ms': 120_000 })
  const acked = new Array<RecordMetadata | undefined>(count)
  let ackCount = 0
  let sent = 0
  const failures: unknown[] = []
  let crash: Promise<{ killed: number; unacknowledgedAtKill: number }> | null = null
  const killLeader = async () => {
    const killed = await leaderOf(cluster.bootstrap, topic, 0)
    const unacknowledgedAtKill = sent - ackCount
    await cluster.kill(killed)
    return { killed, unacknowledgedAtKill }
  }
  const t0 = Date.now()
  try {
    for (let i = 0; i < count; i++) {
      producer.send({ topic, key: `key-${i % 1009}`, value: `v-${i}` }).then(
        (md) => {
          acked[i] = md
          if (++ackCount === Math.floor(count / 3)) crash = killLeader()
        },
        (err: unknown) => failures.push(err),
      )
      sent++
      if ((i & 255) === 255) await producer.waitForBufferSpace()
    }
    await producer.flush()
  } finally {
    await producer.close()
  }
  const ms = Date.now() - t0
  expect(failures).toEqual([])
  expect(ackCount).toBe(count)
  const { killed, unacknowledgedAtKill } = await crash!

  // Read back from the two brokers left: each record once, where its acknowledgement said, in order per partition.
  const consumer = new Consumer({ bootstrapServers: cluster.bootstrap, 'auto.offset.reset': 'earliest', 'fetch.max.wait.ms': 100 })
  const seen = new Uint8Array(count)
  const lastIndex = new Array<number>(partitions).fill(-1)
  const problems: string[] = []
  let read = 0
  try {
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })))
    const deadline = Date.now() + 120_000 + count / 5
    while (read < count && Date.now() < deadline && problems.length < 20) {
      for (const batch of await consumer.poll(500)) {
        for (const r of batch.records) {
          const i = Number(str(r.value)!.slice(2))
          const md = acked[i]!
          if (seen[i] === 1) problems.push(`record ${i} read twice`)
          if (md.partition !== r.partition || md.offset !== r.offset) problems.push(`record ${i} acknowledged at ${md.partition}/${md.offset}, read at ${r.partition}/${r.offset}`)
          if (i <= lastIndex[r.partition]!) problems.push(`record ${i} after ${lastIndex[r.partition]} in partition ${r.partition}`)
          seen[i] = 1
          lastIndex[r.partition] = i
          read++
        }
      }
    }
    // Nothing more may come.
    for (const batch of await consumer.poll(300)) if (batch.records.length > 0) problems.push(`${batch.records.length} records past the ${count} sent`)
  } finally {
    await consumer.close()
  }
  expect(problems).toEqual([])
  expect(read).toBe(count)
  return { killed, unacknowledgedAtKill, ms }
}

export async function transactionScenario(bootstrap: string, prefix: string): Promise<void> {
  const input = `${prefix}-in`
  const output = `${prefix}-out`
  const group = `${prefix}-copier`
  await createTopic(bootstrap, input, 2)
  await createTopic(bootstrap, output, 2)
  const count = 600
  const source = new Producer({ bootstrapServers: bootstrap })
  await Promise.all(Array.from({ length: count }, (_, i) => source.send({ topic: input, key: `k${i}`, value: `in-${i}` })))
  await source.close()

  const producer = new Producer({ bootstrapServers: bootstrap, 'transactional.id': `${prefix}-txn`, 'linger.ms': 5 })
  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: group, 'auto.offset.reset': 'earliest', 'enable.auto.commit': false, 'fetch.max.wait.ms': 100 })
  try {
    await producer.initTransactions()
    consumer.assign([0, 1].map((partition) => ({ topic: input, partition })))
    let copied = 0
    let round = 0
    const deadline = Date.now() + 60_000
    while (copied < count && Date.now() < deadline) {
      const batches = await consumer.poll(500)
      if (batches.length === 0) continue
      round++
      producer.beginTransaction()
      const sends = []
      for (const b of batches) for (const r of b.records) sends.push(producer.send({ topic: output, key: r.key, value: `out-${str(r.value)!.slice(3)}` }))
      const offsets = batches.map((b) => ({ topic: b.topic, partition: b.partition, offset: b.records.at(-1)!.offset + 1n }))
      if (round === 2) {
        // this transaction aborts: its records are not read, and it is done again
        await Promise.allSettled(sends)
        await producer.sendOffsetsToTransaction(offsets, group)
        await producer.abortTransaction()
        for (const b of batches) consumer.seek(b.topic, b.partition, b.records[0]!.offset)
        continue
      }
      await producer.sendOffsetsToTransaction(offsets, group)
      await producer.commitTransaction()
      await Promise.all(sends)
      copied += sends.length
    }
    expect(round).toBeGreaterThan(2)
    expect(copied).toBe(count)
    // the group's offsets are the input's end (Kafka writes the commit markers of
    // __consumer_offsets after EndTxn answers: asked again until they are there, at most 20 s)
    const ends = (await readAll(bootstrap, input, 2, count)).reduce((m, r) => m.set(`${input}\u0000${r.partition}`, r.offset + 1n), new Map<string, bigint>())
    let committed = new Map<string, bigint>()
    for (let i = 0; i < 100; i++) {
      committed = await consumer.committed([0, 1].map((partition) => ({ topic: input, partition })))
      if ([...ends].every(([k, v]) => committed.get(k) === v)) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(committed).toEqual(ends)
  } finally {
    await consumer.close()
    await producer.close()
  }
  const back = await readAll(bootstrap, output, 2, count, 'read_committed')
  const values = back.map((r) => str(r.value)!)
  expect(values.length).toBe(count)
  expect(new Set(values)).toEqual(new Set(Array.from({ length: count }, (_, i) => `out-${i}`)))
}
