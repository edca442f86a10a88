/**
 * kafkajs 2 as a transactional producer against ferrolog's transaction coordinator:
 * `producer.transaction()`, sends to several partitions, `sendOffsets`, commit and abort, and a
 * second producer with the same transactionalId fencing the first. What is checked is the log
 * (READ_UNCOMMITTED): the records, then one control batch per partition with the marker
 * (COMMIT or ABORT) and the coordinator epoch, and the group's offsets in OffsetFetch only
 * once the transaction committed. Then a kafkajs READ_COMMITTED consumer: committed records only,
 * held at the last stable offset while a transaction is open. kafkajs does not read the
 * transaction.version feature: it speaks transaction version 0 (EndTxn v1, AddPartitionsToTxn),
 * and its epoch stays put across transactions.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeEndTransactionMarker } from '../../ts/protocol/control-record.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined
const producers: Producer[] = []
afterEach(async () => {
  for (const p of producers.splice(0)) await p.disconnect().catch(() => {})
  await broker?.stop()
  broker = undefined
})

function kafkaFor(b: Broker): Kafka {
  return new Kafka({ clientId: 'ferrolog-test', brokers: [`127.0.0.1:${b.port}`], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 50 } })
}

async function transactionalProducer(kafka: Kafka, transactionalId: string): Promise<Producer> {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
  producers.push(producer)
  await producer.connect()
  return producer
}

/** The batches of a partition's log: data records' values, and control markers. */
function logContents(
  b: Broker,
  topic: string,
  partition: number,
): Array<{
  control: boolean
  transactional: boolean
  producerId: bigint
  producerEpoch: number
  values: string[]
  marker?: { type: 'ABORT' | 'COMMIT'; coordinatorEpoch: number } | null
}> {
  const log = b.logManager.getLog(topic, partition)!
  return log.readBatches(log.logStartOffset(), { isolation: 'LOG_END', maxBytes: 10 * 1024 * 1024 }).map((batch) => ({
    control: batch.isControl,
    transactional: batch.isTransactional,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    values: batch.isControl ? [] : batch.records.map((r) => r.value!.toString()),
    ...(batch.isControl ? { marker: decodeEndTransactionMarker(batch.records[0].key, batch.records[0].value) } : {}),
  }))
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('kafkajs transactional producer', () => {
  it('commits: records then a COMMIT marker in each partition; aborts: an ABORT marker', { timeout: 60_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('tx', 2, {})
    const producer = await transactionalProducer(kafkaFor(broker), 'my-tx')

    const t1 = await producer.transaction()
    await t1.send({
      topic: 'tx',
      messages: [
        { value: 'c1', partition: 0 },
        { value: 'c2', partition: 1 },
      ],
    })
    await t1.commit()
    const t2 = await producer.transaction()
    await t2.send({ topic: 'tx', messages: [{ value: 'a1', partition: 0 }] })
    await t2.abort()

    const b = broker
    await until(() => logContents(b, 'tx', 0).filter((x) => x.control).length === 2, 'two markers in tx-0')
    const p0 = logContents(b, 'tx', 0)
    expect(p0.map((x) => (x.control ? `marker:${x.marker?.type}` : x.values.join(',')))).toEqual(['c1', 'marker:COMMIT', 'a1', 'marker:ABORT'])
    expect(p0.every((x) => x.transactional)).toBe(true)
    expect(new Set(p0.map((x) => x.producerId)).size).toBe(1)
    const p1 = logContents(b, 'tx', 1)
    expect(p1.map((x) => (x.control ? `marker:${x.marker?.type}` : x.values.join(',')))).toEqual(['c2', 'marker:COMMIT'])

    const [described] = b.transactionCoordinator.describeTransactions(['my-tx'])
    await until(() => b.transactionCoordinator.describeTransactions(['my-tx'])[0].transactionState === 'CompleteAbort', 'CompleteAbort')
    expect(described.producerId).toBe(p0[0].producerId)
    // Transaction version 0: no epoch bump at the ends; both transactions and their markers at epoch 0.
    expect([...p0, ...p1].map((x) => x.producerEpoch)).toEqual([0, 0, 0, 0, 0, 0])
    expect(b.transactionCoordinator.describeTransactions(['my-tx'])[0].producerEpoch).toBe(0)
    expect(b.transactionCoordinator.stateManager.transactions.get('my-tx')!.clientTransactionVersion).toBe(0)
  })

  it('sendOffsets: the group offset is visible only after the commit, and an aborted one never', { timeout: 60_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('in', 1, {})
    await broker.createTopic('out', 1, {})
    const kafka = kafkaFor(broker)
    const producer = await transactionalProducer(kafka, 'eos-tx')
    const admin = kafka.admin()
    await admin.connect()
    try {
      const aborted = await producer.transaction()
      await aborted.send({ topic: 'out', messages: [{ value: 'x' }] })
      await aborted.sendOffsets({ consumerGroupId: 'eos-group', topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '5' }] }] })
      expect(broker.groupCoordinator.offsets.get('eos-group', 'in', 0)).toBeUndefined()
      await aborted.abort()

      const committed = await producer.transaction()
      await committed.send({ topic: 'out', messages: [{ value: 'y' }] })
      await committed.sendOffsets({ consumerGroupId: 'eos-group', topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '7' }] }] })
      // Written to __consumer_offsets, not visible before the marker.
      expect(broker.groupCoordinator.offsets.get('eos-group', 'in', 0)).toBeUndefined()
      await committed.commit()
      const b = broker
      await until(() => b.groupCoordinator.offsets.get('eos-group', 'in', 0)?.offset === 7n, 'the committed offset')
      const fetched = await admin.fetchOffsets({ groupId: 'eos-group', topics: ['in'] })
      expect(fetched[0].partitions[0].offset).toBe('7')
      const markers = logContents(b, '__consumer_offsets', b.groupCoordinator.partitionFor('eos-group'))
        .filter((x) => x.control)
        .map((x) => x.marker?.type)
      expect(markers).toEqual(['ABORT', 'COMMIT'])
    } finally {
      await admin.disconnect()
    }
  })

  it('a second producer with the same transactionalId fences the first and aborts its open transaction', { timeout: 60_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('fence', 1, {})
    const kafka = kafkaFor(broker)
    const first = await transactionalProducer(kafka, 'fenced-tx')
    const open = await first.transaction()
    await open.send({ topic: 'fence', messages: [{ value: 'zombie' }] })

    const second = await transactionalProducer(kafka, 'fenced-tx')
    const t = await second.transaction()
    await t.send({ topic: 'fence', messages: [{ value: 'winner' }] })
    await t.commit()

    const failure = await open.commit().then(
      () => null,
      (err: Error) => err,
    )
    expect(failure).not.toBeNull()
    expect(`${failure!.name} ${failure!.message}`).toMatch(/fenced|epoch/i)

    const b = broker
    const contents = logContents(b, 'fence', 0).map((x) => (x.control ? `marker:${x.marker?.type}` : x.values.join(',')))
    expect(contents).toEqual(['zombie', 'marker:ABORT', 'winner', 'marker:COMMIT'])
  })
})

describe('kafkajs READ_COMMITTED consumer over kafkajs transactions', () => {
  it('reads only committed records, and nothing past an open transaction until it commits', { timeout: 90_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('rc', 1, {})
    const kafka = kafkaFor(broker)
    const producer = await transactionalProducer(kafka, 'rc-tx')
    const commit = await producer.transaction()
    await commit.send({ topic: 'rc', messages: [{ value: 'c1' }, { value: 'c2' }] })
    await commit.commit()
    const abort = await producer.transaction()
    await abort.send({ topic: 'rc', messages: [{ value: 'a1' }, { value: 'a2' }] })
    await abort.abort()
    // Left open while the consumer reads: the last stable offset stops before it.
    const open = await producer.transaction()
    await open.send({ topic: 'rc', messages: [{ value: 'o1' }] })

    const values: string[] = []
    const consumer = kafka.consumer({ groupId: 'rc-group', readUncommitted: false, maxWaitTimeInMs: 100 })
    await consumer.connect()
    try {
      await consumer.subscribe({ topic: 'rc', fromBeginning: true })
      await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) })
      await until(() => values.length >= 2, 'the committed records')
      // c1 c2 COMMIT a1 a2 ABORT o1: the last stable offset is o1's, the open transaction's first.
      const log = broker.logManager.getLog('rc', 0)!
      expect([log.lastStableOffset(), log.logEndOffset()]).toEqual([6n, 7n])
      // A read_uncommitted reader would have o1 by now; read_committed waits at the LSO.
      await new Promise((r) => setTimeout(r, 500))
      expect(values).toEqual(['c1', 'c2'])
      await open.commit()
      await until(() => values.length >= 3, 'the record of the transaction just committed')
      expect(values).toEqual(['c1', 'c2', 'o1'])
    } finally {
      await consumer.disconnect()
    }
  })
})
