/**
 * The Admin's scenarios, run against any Kafka-speaking broker (ferrolog in admin.test.ts,
 * Apache Kafka 4.4 in admin-kafka.test.ts), with the same expectations on both:
 *
 *   - topics: create (one that exists fails alone with TOPIC_ALREADY_EXISTS), list, describe
 *     (an unknown topic fails alone), add partitions (fewer is INVALID_PARTITIONS), delete (an
 *     unknown topic fails alone);
 *   - configs: a topic's own config described with its source, set and deleted with
 *     incrementalAlterConfigs, an unknown topic's configs failing alone;
 *   - groups: a real Consumer group's committed offsets listed, altered and deleted, the group
 *     listed, described and deleted; an unknown group fails alone;
 *   - listOffsets by earliest, latest, timestamp and max timestamp; deleteRecords moving the
 *     log start; describeCluster; describeProducers and describeTransactions of a
 *     transactional Producer.
 */
import { expect } from 'vitest'
import { Admin, type AdminResult } from '../../ts/client/admin.js'
import { Consumer } from '../../ts/client/consumer.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { Producer } from '../../ts/client/producer.js'

const settle = async <V>(result: AdminResult<V>) => {
  const out = new Map<string, { ok: true; value: V } | { ok: false; code: string }>()
  for (const [key, p] of result.values()) {
    out.set(
      key,
      await p.then(
        (value) => ({ ok: true as const, value }),
        (err: unknown) => {
          expect(err).toBeInstanceOf(KafkaClientError)
          return { ok: false as const, code: (err as KafkaClientError).code }
        },
      ),
    )
  }
  return out
}

/** Codes per key ('OK' for a success). */
const codes = async <V>(result: AdminResult<V>) => Object.fromEntries([...(await settle(result))].map(([k, r]) => [k, r.ok ? 'OK' : r.code]))

/** `check` until it passes (metadata reaches every broker's cache a little after a change). */
async function eventually(check: () => Promise<void>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      return await check()
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

export async function topicsScenario(bootstrap: string, prefix: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap })
  const [a, b, c] = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]
  try {
    const created = await admin
      .createTopics([
        { name: a, numPartitions: 3, replicationFactor: 1, configs: { 'retention.ms': '123456' } },
        { name: b, numPartitions: 1, replicationFactor: 1 },
      ])
      .all()
    expect(created.get(a)!.numPartitions).toBe(3)
    expect(created.get(a)!.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(created.get(a)!.configs.find((e) => e.name === 'retention.ms')?.value).toBe('123456')

    // the one that exists fails alone, the other is created
    expect(
      await codes(
        admin.createTopics([
          { name: a, numPartitions: 1 },
          { name: c, numPartitions: 2, replicationFactor: 1 },
        ]),
      ),
    ).toEqual({ [a]: 'TOPIC_ALREADY_EXISTS', [c]: 'OK' })
    await expect(admin.createTopics([{ name: a }]).all()).rejects.toMatchObject({ code: 'TOPIC_ALREADY_EXISTS', errorCode: 36 })

    await eventually(async () => {
      const names = (await admin.listTopics()).map((t) => t.name)
      expect(names.filter((n) => n.startsWith(`${prefix}-`))).toEqual([a, b, c])
      expect(names).not.toContain('__consumer_offsets')
    })

    const described = await settle(admin.describeTopics([a, `${prefix}-missing`]))
    expect(described.get(`${prefix}-missing`)).toEqual({ ok: false, code: 'UNKNOWN_TOPIC_OR_PARTITION' })
    const da = described.get(a)!
    if (!da.ok) throw new Error(`describe ${a}: ${da.code}`)
    expect(da.value.partitions.map((p) => p.partition)).toEqual([0, 1, 2])
    expect(da.value.partitions.every((p) => p.leader !== null && p.replicas.length === 1 && p.isr.length === 1)).toBe(true)
    expect(da.value.topicId).toBe(created.get(a)!.topicId)

    expect(await codes(admin.createPartitions({ [a]: { totalCount: 5 }, [b]: { totalCount: 1 }, [`${prefix}-missing`]: { totalCount: 2 } }))).toEqual({
      [a]: 'OK',
      [b]: 'INVALID_PARTITIONS',
      [`${prefix}-missing`]: 'UNKNOWN_TOPIC_OR_PARTITION',
    })
    await eventually(async () => expect((await admin.describeTopics([a]).value(a)).partitions).toHaveLength(5))

    expect(await codes(admin.deleteTopics([b, `${prefix}-missing`]))).toEqual({ [b]: 'OK', [`${prefix}-missing`]: 'UNKNOWN_TOPIC_OR_PARTITION' })
    await eventually(async () => expect((await admin.listTopics()).map((t) => t.name).filter((n) => n.startsWith(`${prefix}-`))).toEqual([a, c]))
  } finally {
    await admin.close()
  }
}

export async function configsScenario(bootstrap: string, prefix: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap })
  const topic = `${prefix}-t`
  const resource = { type: 'TOPIC' as const, name: topic }
  const key = `TOPIC:${topic}`
  try {
    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1, configs: { 'retention.ms': '123456' } }]).all()
    await eventually(async () => {
      const config = await admin.describeConfigs([resource]).value(key)
      expect(config.get('retention.ms')).toMatchObject({ value: '123456', source: 'DYNAMIC_TOPIC_CONFIG', isDefault: false, isSensitive: false })
      expect(config.get('cleanup.policy')).toMatchObject({ value: 'delete', source: 'DEFAULT_CONFIG', isDefault: true })
    })

    const missing = { type: 'TOPIC' as const, name: `${prefix}-missing` }
    expect(await codes(admin.describeConfigs([resource, missing]))).toEqual({ [key]: 'OK', [`TOPIC:${prefix}-missing`]: 'UNKNOWN_TOPIC_OR_PARTITION' })

    await admin
      .incrementalAlterConfigs([
        [
          resource,
          [
            { name: 'retention.ms', opType: 'SET', value: '999999' },
            { name: 'max.message.bytes', opType: 'SET', value: '2000' },
          ],
        ],
      ])
      .all()
    await eventually(async () => {
      const config = await admin.describeConfigs([resource]).value(key)
      expect(config.get('retention.ms')?.value).toBe('999999')
      expect(config.get('max.message.bytes')).toMatchObject({ value: '2000', source: 'DYNAMIC_TOPIC_CONFIG' })
    })

    await admin.incrementalAlterConfigs(new Map([[resource, [{ name: 'retention.ms', opType: 'DELETE' as const }]]])).all()
    await eventually(async () => {
      const config = await admin.describeConfigs([resource]).value(key)
      expect(config.get('retention.ms')).toMatchObject({ value: '604800000', source: 'DEFAULT_CONFIG' })
      expect(config.get('max.message.bytes')?.value).toBe('2000')
    })

    // an unknown topic and an invalid value each fail alone
    expect(
      await codes(
        admin.incrementalAlterConfigs([
          [missing, [{ name: 'retention.ms', opType: 'SET', value: '1' }]],
          [resource, [{ name: 'retention.ms', opType: 'SET', value: 'soon' }]],
        ]),
      ),
    ).toEqual({ [`TOPIC:${prefix}-missing`]: 'UNKNOWN_TOPIC_OR_PARTITION', [key]: 'INVALID_CONFIG' })

    // a broker's own configs, at that broker
    const cluster = await admin.describeCluster()
    const brokerId = String(cluster.nodes[0]!.nodeId)
    const broker = await admin.describeConfigs([{ type: 'BROKER', name: brokerId }]).value(`BROKER:${brokerId}`)
    expect(broker.get('log.cleanup.policy')?.value).toBe('delete')
  } finally {
    await admin.close()
  }
}

export async function groupsScenario(bootstrap: string, prefix: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap })
  const topic = `${prefix}-t`
  const group = `${prefix}-group`
  const tp = (partition: number) => ({ topic, partition })
  try {
    await admin.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1 }]).all()
    const producer = new Producer({ bootstrapServers: bootstrap })
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => producer.send({ topic, partition: i % 2, value: `v${i}` })))
    } finally {
      await producer.close()
    }
    const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: group, 'auto.offset.reset': 'earliest', 'enable.auto.commit': false, 'fetch.max.wait.ms': 100 })
    try {
      consumer.subscribe([topic])
      let read = 0
      const deadline = Date.now() + 60_000
      while (read < 10 && Date.now() < deadline) for (const b of await consumer.poll(500)) read += b.records.length
      expect(read).toBe(10)
      await consumer.commit()
      // while the consumer is in the group: it is listed and described with its member
      const listed = await admin.listConsumerGroups()
      expect(listed.find((g) => g.groupId === group)).toBeDefined()
      const live = await admin.describeConsumerGroups([group]).value(group)
      expect(live.groupState).toBe('Stable')
      expect(live.members).toHaveLength(1)
      expect(live.members[0]!.assignment.map((a) => a.partition).sort()).toEqual([0, 1])
      expect(live.isSimpleConsumerGroup).toBe(false)
      // a group with a member cannot be deleted, nor its offsets of subscribed topics
      expect(await codes(admin.deleteConsumerGroups([group, `${prefix}-missing`]))).toEqual({ [group]: 'NON_EMPTY_GROUP', [`${prefix}-missing`]: 'GROUP_ID_NOT_FOUND' })
      expect(await codes(admin.deleteConsumerGroupOffsets(group, [tp(0)]))).toEqual({ [`${topic}-0`]: 'GROUP_SUBSCRIBED_TO_TOPIC' })
    } finally {
      await consumer.close()
    }

    const offsets = await admin.listConsumerGroupOffsets(group)
    expect(Object.fromEntries([...offsets].map(([k, v]) => [k, v?.offset]))).toEqual({ [`${topic}-0`]: 5n, [`${topic}-1`]: 5n })
    await eventually(async () => expect((await admin.describeConsumerGroups([group]).value(group)).groupState).toBe('Empty'))

    await admin.alterConsumerGroupOffsets(group, [{ ...tp(0), offset: 2n, metadata: 'rewound' }]).all()
    const altered = await admin.listConsumerGroupOffsets(group, { topicPartitions: [tp(0), tp(1)] })
    expect(altered.get(`${topic}-0`)).toMatchObject({ offset: 2n, metadata: 'rewound' })
    expect(altered.get(`${topic}-1`)?.offset).toBe(5n)

    expect(await codes(admin.deleteConsumerGroupOffsets(group, [tp(1)]))).toEqual({ [`${topic}-1`]: 'OK' })
    const after = await admin.listConsumerGroupOffsets(group, { topicPartitions: [tp(0), tp(1)] })
    expect(after.get(`${topic}-0`)?.offset).toBe(2n)
    expect(after.get(`${topic}-1`) ?? null).toBeNull()

    expect(await codes(admin.describeConsumerGroups([`${prefix}-missing`]))).toEqual({ [`${prefix}-missing`]: 'GROUP_ID_NOT_FOUND' })
    await admin.deleteConsumerGroups([group]).all()
    expect((await admin.listGroups()).map((g) => g.groupId)).not.toContain(group)
    expect(await codes(admin.deleteConsumerGroups([group]))).toEqual({ [group]: 'GROUP_ID_NOT_FOUND' })
  } finally {
    await admin.close()
  }
}

export async function offsetsScenario(bootstrap: string, prefix: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap })
  const topic = `${prefix}-t`
  const key = `${topic}-0`
  try {
    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]).all()
    const base = Date.now() - 60_000
    const producer = new Producer({ bootstrapServers: bootstrap })
    try {
      // timestamps 0, 10, 20, 30, 40 s after base, the largest (record 3) not last
      for (const [i, at] of [0, 10, 20, 40, 30].entries()) await producer.send({ topic, partition: 0, value: `v${i}`, timestamp: base + at * 1000 })
    } finally {
      await producer.close()
    }
    const offsetFor = async (spec: Parameters<Admin['listOffsets']>[0][number]['spec']) => (await admin.listOffsets([{ topic, partition: 0, spec }]).value(key)).offset
    expect(await offsetFor('earliest')).toBe(0n)
    expect(await offsetFor('latest')).toBe(5n)
    expect(await offsetFor({ timestamp: base + 15_000 })).toBe(2n)
    expect(await offsetFor({ timestamp: base + 35_000 })).toBe(3n)
    const max = await admin.listOffsets([{ topic, partition: 0, spec: 'max-timestamp' }]).value(key)
    expect(max).toMatchObject({ offset: 3n, timestamp: BigInt(base + 40_000) })
    // past every timestamp: no offset (-1)
    expect(await offsetFor({ timestamp: base + 600_000 })).toBe(-1n)

    expect(
      await codes(
        admin.listOffsets([
          { topic, partition: 7, spec: 'latest' },
          { topic: `${prefix}-missing`, partition: 0, spec: 'latest' },
        ]),
      ),
    ).toEqual({
      [`${topic}-7`]: 'UNKNOWN_TOPIC_OR_PARTITION',
      [`${prefix}-missing-0`]: 'UNKNOWN_TOPIC_OR_PARTITION',
    })

    expect(await admin.deleteRecords([{ topic, partition: 0, beforeOffset: 2n }]).value(key)).toEqual({ lowWatermark: 2n })
    expect(await offsetFor('earliest')).toBe(2n)
    expect(await codes(admin.deleteRecords([{ topic, partition: 0, beforeOffset: 9n }]))).toEqual({ [key]: 'OFFSET_OUT_OF_RANGE' })
    // -1: up to the high watermark
    expect(await admin.deleteRecords([{ topic, partition: 0, beforeOffset: -1n }]).value(key)).toEqual({ lowWatermark: 5n })
    expect(await offsetFor('earliest')).toBe(5n)
  } finally {
    await admin.close()
  }
}

export async function clusterScenario(bootstrap: string, prefix: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap })
  const topic = `${prefix}-t`
  try {
    const cluster = await admin.describeCluster()
    expect(cluster.clusterId).toEqual(expect.any(String))
    expect(cluster.clusterId).not.toBe('')
    expect(cluster.nodes).toHaveLength(1)
    expect(cluster.nodes[0]).toMatchObject({ host: '127.0.0.1', port: Number(bootstrap.split(':')[1]) })
    expect(cluster.controller?.nodeId).toBe(cluster.nodes[0]!.nodeId)

    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]).all()
    const transactionalId = `${prefix}-txn`
    const producer = new Producer({ bootstrapServers: bootstrap, transactionalId })
    try {
      await producer.initTransactions()
      producer.beginTransaction()
      await producer.send({ topic, partition: 0, value: 'in a transaction' })
      await producer.flush()
      const open = await admin.describeTransactions([transactionalId]).value(transactionalId)
      expect(open).toMatchObject({ state: 'Ongoing', producerEpoch: expect.any(Number), topicPartitions: [{ topic, partition: 0 }] })
      const producers = await admin.describeProducers([{ topic, partition: 0 }]).value(`${topic}-0`)
      expect(producers).toHaveLength(1)
      expect(producers[0]).toMatchObject({ producerId: open.producerId, producerEpoch: open.producerEpoch, lastSequence: 0, currentTransactionStartOffset: 0n })
      await producer.commitTransaction()
      await eventually(async () => expect((await admin.describeTransactions([transactionalId]).value(transactionalId)).state).toBe('CompleteCommit'))
      const after = await admin.describeProducers([{ topic, partition: 0 }]).value(`${topic}-0`)
      expect(after[0]?.currentTransactionStartOffset).toBe(-1n)
    } finally {
      await producer.close()
    }
    expect(await codes(admin.describeTransactions([`${prefix}-no-txn`]))).toEqual({ [`${prefix}-no-txn`]: 'TRANSACTIONAL_ID_NOT_FOUND' })
  } finally {
    await admin.close()
  }
}
