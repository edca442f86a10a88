/**
 * Transaction versions 1 and 2 (KIP-890) side by side on ferrolog and Apache Kafka 4.4, the
 * cluster's `transaction.version` set with Kafka's own `kafka-features.sh`:
 *
 * - ferrolog's transactional Producer, made after each change, commits and aborts transactions
 *   with sendOffsetsToTransaction; a read_committed Consumer reads the committed records exactly
 *   once and none of the aborted ones, and the group's offsets are committed. Under version 2 the
 *   coordinator bumps the epoch at every transaction end (EndTxn v5, followed by the producer),
 *   under version 1 it stays: DescribeTransactions shows the same epochs on both brokers.
 * - The partition leader's side of WriteTxnMarkers v2 (KIP-1228): a marker of a version 2
 *   transaction must carry an epoch above the transaction's, one at it is a retry once the
 *   transaction is closed, a version 0 marker only must not be older: the same error codes from
 *   both brokers.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Admin } from '../../ts/client/admin.js'
import { Consumer } from '../../ts/client/consumer.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { Producer } from '../../ts/client/producer.js'
import { addPartitionsToTxnCodec } from '../../ts/protocol/apis/add-partitions-to-txn.js'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { writeTxnMarkersCodec } from '../../ts/protocol/apis/write-txn-markers.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { createTopic, readAll } from '../client/producer-scenarios.js'

let kafkaDir: string
let kafkaPort: number
let ferrolog: Broker
let ferrologDir: string | undefined

beforeAll(async () => {
  fetchKafkaJars()
  // Its own data dir, not tempDir's (removed after each test): the broker serves the whole file.
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-txn-versions-'))
  ferrolog = await startBroker({ dataDir: ferrologDir })
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-txn-versions-kafka-'))
  kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
}, 300_000)

afterAll(async () => {
  await ferrolog?.stop()
  if (ferrologDir) rmSync(ferrologDir, { recursive: true, force: true })
  if (kafkaDir) {
    stopKafkaBroker(kafkaDir)
    rmSync(kafkaDir, { recursive: true, force: true })
  }
}, 120_000)

const brokers = () => [
  { name: 'ferrolog', port: ferrolog.port },
  { name: 'Kafka 4.4', port: kafkaPort },
]

/** kafka-features.sh upgrade|downgrade --feature transaction.version=LEVEL; then waits until ApiVersions says so. */
async function setTransactionVersion(port: number, level: number): Promise<void> {
  const r = await runKafkaClass(
    'org.apache.kafka.tools.FeatureCommand',
    ['--bootstrap-server', `127.0.0.1:${port}`, level >= 2 ? 'upgrade' : 'downgrade', '--feature', `transaction.version=${level}`],
    '',
    60_000,
  )
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0)
  for (let i = 0; ; i++) {
    const c = await NetworkClient.connect(`127.0.0.1:${port}`)
    const seen = c.finalizedFeatureLevel('transaction.version') ?? 0
    await c.close()
    if (seen === level) return
    if (i >= 100) throw new Error(`transaction.version is still ${seen}, not ${level}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const str = (b: Buffer | null) => (b === null ? '' : b.toString())

/**
 * Five transactions of 20 records each over 2 partitions, each with offsets of group `prefix`:
 * the 2nd and 4th aborted. Returns the producer's epoch per DescribeTransactions at the end.
 */
async function transactions(bootstrap: string, prefix: string): Promise<{ epoch: number; values: string[]; committed: Map<string, bigint> }> {
  const topic = `${prefix}-out`
  const input = `${prefix}-in`
  await createTopic(bootstrap, topic, 2)
  await createTopic(bootstrap, input, 1)
  const producer = new Producer({ bootstrapServers: bootstrap, 'transactional.id': `${prefix}-txn`, 'linger.ms': 2 })
  const admin = new Admin({ bootstrapServers: bootstrap })
  try {
    await producer.initTransactions()
    for (let t = 0; t < 5; t++) {
      producer.beginTransaction()
      const sends = Array.from({ length: 20 }, (_, i) => producer.send({ topic, key: `k${i}`, value: `t${t}-${i}` }))
      await producer.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: BigInt(10 * (t + 1)) }], prefix)
      if (t % 2 === 1) {
        await Promise.allSettled(sends)
        await producer.abortTransaction()
      } else {
        await producer.commitTransaction()
        await Promise.all(sends)
      }
    }
    const description = (await admin.describeTransactions([`${prefix}-txn`]).all()).get(`${prefix}-txn`)!
    const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: prefix })
    let committed = new Map<string, bigint>()
    try {
      // The offsets' markers are written after EndTxn answers: asked again until they are there.
      for (let i = 0; i < 100; i++) {
        committed = await consumer.committed([{ topic: input, partition: 0 }])
        if (committed.get(`${input}\u00000`) === 50n) break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    } finally {
      await consumer.close()
    }
    const values = (await readAll(bootstrap, topic, 2, 60, 'read_committed')).map((r) => str(r.value))
    return { epoch: description.producerEpoch, values, committed }
  } finally {
    await admin.close()
    await producer.close()
  }
}

const committedValues = [0, 2, 4].flatMap((t) => Array.from({ length: 20 }, (_, i) => `t${t}-${i}`)).sort()

describe("ferrolog's transactional Producer under transaction versions 2 and 1", () => {
  for (const [level, expectedEpoch] of [
    [2, 5],
    [1, 0],
  ] as const) {
    it(`transaction.version=${level}: commits and aborts read exactly once with read_committed; the epoch ends at ${expectedEpoch}, on ferrolog as on Kafka 4.4`, { timeout: 300_000 }, async () => {
      const outcomes = []
      for (const { name, port } of brokers()) {
        await setTransactionVersion(port, level)
        const { epoch, values, committed } = await transactions(`127.0.0.1:${port}`, `tv${level}`)
        outcomes.push({ name, epoch, values: [...values].sort(), committed: [...committed] })
      }
      const expected = { epoch: expectedEpoch, values: committedValues, committed: [['tv' + level + '-in\u00000', 50n]] }
      expect(outcomes).toEqual(brokers().map(({ name }) => ({ name, ...expected })))
    })
  }
})

describe('WriteTxnMarkers v2 at the partition leader (KIP-1228)', () => {
  it('holds a transaction version 2 marker above the epoch of the transaction, on ferrolog as on Kafka 4.4', { timeout: 120_000 }, async () => {
    const outcomes = []
    for (const { name, port } of brokers()) {
      const bootstrap = `127.0.0.1:${port}`
      await createTopic(bootstrap, 'markers', 1)
      const c = new NetworkClient({ bootstrapServers: bootstrap })
      try {
        await c.refreshMetadata(['markers'])
        const node = c.candidateNodes()[0]!
        const txnId = 'markers-txn'
        // The first FindCoordinator of a transactional id makes __transaction_state (COORDINATOR_NOT_AVAILABLE until it is led).
        const findCoordinator = () => c.request(node, findCoordinatorCodec, { key: '', keyType: CoordinatorType.TRANSACTION, coordinatorKeys: [txnId] })
        let coordinator = await findCoordinator()
        for (let i = 0; i < 100 && coordinator.coordinators[0]!.errorCode !== ErrorCode.NONE; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          coordinator = await findCoordinator()
        }
        expect(coordinator.coordinators[0]!.errorCode, `FindCoordinator on ${name}`).toBe(ErrorCode.NONE)
        // The coordinator may still be loading its partition of __transaction_state: asked again until it answers.
        let init = await c.request(node, initProducerIdCodec, { transactionalId: txnId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false })
        for (let i = 0; i < 100 && init.errorCode !== ErrorCode.NONE; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          init = await c.request(node, initProducerIdCodec, { transactionalId: txnId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false })
        }
        expect(init.errorCode, `InitProducerId on ${name}`).toBe(ErrorCode.NONE)
        const { producerId, producerEpoch: epoch } = init
        // A version 1 transaction on the partition: AddPartitionsToTxn v3, a transactional Produce v11 at `epoch`.
        const added = await c.request(
          node,
          addPartitionsToTxnCodec,
          { transactions: [], v3AndBelowTransactionalId: txnId, v3AndBelowProducerId: producerId, v3AndBelowProducerEpoch: epoch, v3AndBelowTopics: [{ name: 'markers', partitions: [0] }] },
          { maxVersion: 3 },
        )
        expect(added.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, `AddPartitionsToTxn on ${name}`).toBe(ErrorCode.NONE)
        const batch = buildBatch([{ value: 'v' }], { producerId, producerEpoch: epoch, baseSequence: 0, isTransactional: true })
        const produce = () =>
          c.request(
            node,
            produceCodec,
            { transactionalId: txnId, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'markers', topicId: ZERO_UUID, partitionData: [{ index: 0, records: batch }] }] },
            { maxVersion: 11 },
          )
        // A new topic's leader may not have taken the partition yet (NOT_LEADER_OR_FOLLOWER): nothing appended, sent again.
        let produced = await produce()
        for (let i = 0; i < 100 && produced.responses[0]!.partitionResponses[0]!.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          produced = await produce()
        }
        expect(produced.responses[0]!.partitionResponses[0]!.errorCode, `Produce to ${name}`).toBe(ErrorCode.NONE)
        const write = async (version: number, producerEpoch: number, transactionVersion: number) => {
          const marker = { producerId, producerEpoch, transactionResult: false, topics: [{ name: 'markers', partitionIndexes: [0] }], coordinatorEpoch: 0, transactionVersion }
          const r = await c.request(node, writeTxnMarkersCodec, { markers: [marker] }, { maxVersion: version })
          return r.markers[0]!.topics[0]!.partitions[0]!.errorCode
        }
        outcomes.push({
          name,
          codes: [
            await write(2, epoch, 2), // not bumped: refused
            await write(2, epoch, 1), // version 1 at the epoch: written, the transaction ends here
            await write(2, epoch, 2), // the same epoch again, nothing open: a retry, written
            await write(2, epoch + 1, 2), // bumped: written
            await write(1, epoch, 0), // v1 (version 0) below the epoch now: refused
          ],
        })
      } finally {
        await c.close()
      }
    }
    const codes = [ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE, ErrorCode.INVALID_PRODUCER_EPOCH]
    expect(outcomes).toEqual(brokers().map(({ name }) => ({ name, codes })))
  })
})
