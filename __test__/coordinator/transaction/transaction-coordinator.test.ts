/**
 * The transaction coordinator through a socket, as a client sees it: InitProducerId for
 * transactional ids (epochs, fencing, KIP-360 retries, CONCURRENT_TRANSACTIONS while an
 * abort completes, epoch exhaustion, timeouts), AddPartitionsToTxn (v0-v3 and batched v4 with
 * verifyOnly), EndTxn's state machine, timeouts aborting and fencing, transactional id
 * expiration, Describe/ListTransactions, DescribeProducers, WriteTxnMarkers' coordinator epoch
 * fencing, transactional Produce checks, TxnOffsetCommit with OffsetFetch requireStable, and
 * the coordinator's state after a restart.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../../ts/client/network-client.js'
import { addOffsetsToTxnCodec } from '../../../ts/protocol/apis/add-offsets-to-txn.js'
import { addPartitionsToTxnCodec } from '../../../ts/protocol/apis/add-partitions-to-txn.js'
import { describeProducersCodec } from '../../../ts/protocol/apis/describe-producers.js'
import { describeTransactionsCodec } from '../../../ts/protocol/apis/describe-transactions.js'
import { endTxnCodec } from '../../../ts/protocol/apis/end-txn.js'
import { initProducerIdCodec } from '../../../ts/protocol/apis/init-producer-id.js'
import { listTransactionsCodec } from '../../../ts/protocol/apis/list-transactions.js'
import { offsetFetchCodec } from '../../../ts/protocol/apis/offset-fetch.js'
import { produceCodec, type PartitionProduceResponse } from '../../../ts/protocol/apis/produce.js'
import { txnOffsetCommitCodec } from '../../../ts/protocol/apis/txn-offset-commit.js'
import { writeTxnMarkersCodec } from '../../../ts/protocol/apis/write-txn-markers.js'
import { apiVersionsCodec } from '../../../ts/protocol/apis/api-versions.js'
import { ApiKey } from '../../../ts/protocol/apis/api.js'
import { buildBatch } from '../../../ts/protocol/batch-builder.js'
import { buildEndTxnMarker, ControlRecordType } from '../../../ts/protocol/control-record.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import { TransactionState } from '../../../ts/coordinator/transaction/transaction-state.js'
import { TransactionVersion } from '../../../ts/coordinator/transaction/transaction-version.js'
import type { Broker } from '../../../ts/server/broker.js'
import { startBroker } from '../../helpers/broker.js'
import { tempDir } from '../../helpers/tmp.js'

let broker: Broker | undefined
let client: NetworkClient | undefined
afterEach(async () => {
  await client?.close()
  await broker?.stop()
  client = broker = undefined
})

async function open(dataDir = tempDir(), props: Record<string, string> = {}): Promise<NetworkClient> {
  await client?.close()
  await broker?.stop()
  broker = await startBroker({ dataDir, props })
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
  return client
}

function init(c: NetworkClient, transactionalId: string, opts: { timeoutMs?: number; version?: number; producerId?: bigint; producerEpoch?: number } = {}) {
  return c.send(initProducerIdCodec, opts.version ?? 4, {
    transactionalId,
    transactionTimeoutMs: opts.timeoutMs ?? 60_000,
    producerId: opts.producerId ?? -1n,
    producerEpoch: opts.producerEpoch ?? -1,
  })
}

/** AddPartitionsToTxn's two shapes at their defaults: v0-v3's top-level transaction, v4's batch. */
const NO_V3_TRANSACTION = { v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [] }
const NO_BATCH = { transactions: [] }

async function addPartitions(c: NetworkClient, transactionalId: string, producerId: bigint, producerEpoch: number, topics: Array<{ name: string; partitions: number[] }>, version = 3) {
  // v0-v3: one transaction at the top level, answered at the top level
  const r = await c.send(addPartitionsToTxnCodec, version, {
    ...NO_BATCH,
    v3AndBelowTransactionalId: transactionalId,
    v3AndBelowProducerId: producerId,
    v3AndBelowProducerEpoch: producerEpoch,
    v3AndBelowTopics: topics,
  })
  return r.resultsByTopicV3AndBelow.flatMap((t) => t.resultsByPartition.map((p) => [t.name, p.partitionIndex, p.partitionErrorCode]))
}

async function endTxn(c: NetworkClient, transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean, version = 3) {
  return (await c.send(endTxnCodec, version, { transactionalId, producerId, producerEpoch, committed })).errorCode
}

async function produce(c: NetworkClient, topic: string, batch: Buffer, transactionalId: string | null = null): Promise<PartitionProduceResponse> {
  const response = await c.send(produceCodec, 9, { transactionalId, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] })
  return response.responses[0].partitionResponses[0]
}

function txnBatch(producerId: bigint, producerEpoch: number, baseSequence: number, values: string[]): Buffer {
  return buildBatch(
    values.map((value) => ({ value })),
    { producerId, producerEpoch, baseSequence, isTransactional: true },
  )
}

async function describeTxn(c: NetworkClient, id: string) {
  return (await c.send(describeTransactionsCodec, 0, { transactionalIds: [id] })).transactionStates[0]
}

async function until<T>(read: () => Promise<T> | T, ok: (v: T) => boolean, what: string): Promise<T> {
  let last: T | undefined
  for (let i = 0; i < 400; i++) {
    last = await read()
    if (ok(last)) return last
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting for ${what}; last ${JSON.stringify(last, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`)
}

/** The control markers in a partition's log, as [type, producerId, epoch, coordinatorEpoch]. */
function markers(b: Broker, topic: string, partition = 0): Array<[number, bigint, number]> {
  const log = b.logManager.getLog(topic, partition)!
  return log
    .readBatches(log.logStartOffset(), { isolation: 'LOG_END' })
    .filter((batch) => batch.isControl)
    .map((batch) => [batch.records[0].key!.readInt16BE(2), batch.producerId, batch.producerEpoch])
}

describe('ApiVersions', () => {
  it('advertises the transactional APIs with the versions served', async () => {
    const c = await open()
    const { apiKeys } = await c.send(apiVersionsCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' })
    const range = (key: number) => apiKeys.find((k) => k.apiKey === key)
    expect(range(ApiKey.AddPartitionsToTxn)).toMatchObject({ minVersion: 0, maxVersion: 5 })
    expect(range(ApiKey.AddOffsetsToTxn)).toMatchObject({ minVersion: 0, maxVersion: 3 })
    expect(range(ApiKey.EndTxn)).toMatchObject({ minVersion: 0, maxVersion: 5 })
    expect(range(ApiKey.WriteTxnMarkers)).toMatchObject({ minVersion: 1, maxVersion: 2 })
    expect(range(ApiKey.TxnOffsetCommit)).toMatchObject({ minVersion: 0, maxVersion: 5 })
    expect(range(ApiKey.Produce)).toMatchObject({ minVersion: 0, maxVersion: 12 }) // v0-2 advertised as Kafka 4.x, refused
    expect(range(ApiKey.DescribeProducers)).toMatchObject({ minVersion: 0, maxVersion: 0 })
    expect(range(ApiKey.DescribeTransactions)).toMatchObject({ minVersion: 0, maxVersion: 0 })
    expect(range(ApiKey.ListTransactions)).toMatchObject({ minVersion: 0, maxVersion: 1 })
  })
})

describe('InitProducerId with a transactional id', () => {
  it('gives epoch 0, bumps the epoch on each init and fences the older producer (PRODUCER_FENCED; INVALID_PRODUCER_EPOCH before v2)', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const first = await init(c, 'tx')
    expect(first).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 })
    const second = await init(c, 'tx')
    expect(second).toMatchObject({ errorCode: ErrorCode.NONE, producerId: first.producerId, producerEpoch: 1 })
    expect(await addPartitions(c, 'tx', first.producerId, 0, [{ name: 't', partitions: [0] }], 3)).toEqual([['t', 0, ErrorCode.PRODUCER_FENCED]])
    expect(await addPartitions(c, 'tx', first.producerId, 0, [{ name: 't', partitions: [0] }], 1)).toEqual([['t', 0, ErrorCode.INVALID_PRODUCER_EPOCH]])
    expect(await endTxn(c, 'tx', first.producerId, 0, true, 1)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    expect(await addPartitions(c, 'tx', first.producerId + 1n, 1, [{ name: 't', partitions: [0] }])).toEqual([['t', 0, ErrorCode.INVALID_PRODUCER_ID_MAPPING]])
    expect(await addPartitions(c, 'nope', first.producerId, 1, [{ name: 't', partitions: [0] }])).toEqual([['t', 0, ErrorCode.INVALID_PRODUCER_ID_MAPPING]])
  })

  it('KIP-360: a producer bumping its own epoch gets the next one, a retry of it the same, an older epoch PRODUCER_FENCED (INVALID_PRODUCER_EPOCH in v3)', async () => {
    const c = await open()
    const { producerId } = await init(c, 'bump')
    const bumped = await init(c, 'bump', { producerId, producerEpoch: 0 })
    expect(bumped).toMatchObject({ errorCode: ErrorCode.NONE, producerId, producerEpoch: 1 })
    expect(await init(c, 'bump', { producerId, producerEpoch: 0 })).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 })
    expect(await init(c, 'bump', { producerId, producerEpoch: 1 })).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 2 })
    expect(await init(c, 'bump', { producerId, producerEpoch: 0 })).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED })
    expect(await init(c, 'bump', { producerId, producerEpoch: 0, version: 3 })).toMatchObject({ errorCode: ErrorCode.INVALID_PRODUCER_EPOCH })
  })

  it('a new transactional id takes any expected id and epoch (its metadata has no producer yet), as Kafka; @platformatic/kafka sends 0 and 0', async () => {
    const c = await open()
    const first = await init(c, 'fresh', { producerId: 0n, producerEpoch: 0 })
    expect(first).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 })
    expect(first.producerId).toBeGreaterThanOrEqual(0n)
    // Once it has a producer, another producer's id and epoch are fenced.
    expect(await init(c, 'fresh', { producerId: first.producerId + 1000n, producerEpoch: 0 })).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED })
    expect(await init(c, 'fresh', { producerId: first.producerId, producerEpoch: 0 })).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 })
  })

  it('refuses transaction timeouts of 0 or above transaction.max.timeout.ms with INVALID_TRANSACTION_TIMEOUT', async () => {
    const c = await open(tempDir(), { 'transaction.max.timeout.ms': '10000' })
    expect(await init(c, 'tt', { timeoutMs: 10_001 })).toMatchObject({ errorCode: ErrorCode.INVALID_TRANSACTION_TIMEOUT, producerId: -1n })
    expect(await init(c, 'tt', { timeoutMs: 0 })).toMatchObject({ errorCode: ErrorCode.INVALID_TRANSACTION_TIMEOUT })
    expect(await init(c, 'tt', { timeoutMs: 10_000 })).toMatchObject({ errorCode: ErrorCode.NONE })
  })

  it('aborts an ongoing transaction (CONCURRENT_TRANSACTIONS until the ABORT marker is written), then answers the epoch after the fence', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'reinit')
    expect(await addPartitions(c, 'reinit', producerId, 0, [{ name: 't', partitions: [0] }])).toEqual([['t', 0, ErrorCode.NONE]])
    expect((await produce(c, 't', txnBatch(producerId, 0, 0, ['open']), 'reinit')).errorCode).toBe(ErrorCode.NONE)
    expect((await init(c, 'reinit')).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS)
    const after = await until(
      () => init(c, 'reinit'),
      (r) => r.errorCode === ErrorCode.NONE,
      'init after the abort',
    )
    // Epoch 1 fenced the producer, epoch 2 ended its transaction (transaction version 2, the
    // cluster's, as Kafka 4.4 does for aborts it starts itself); this init bumped to 3.
    expect(after).toMatchObject({ producerId, producerEpoch: 3 })
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.ABORT, producerId, 2]])
    // The fenced producer's data is refused at the partition.
    expect((await produce(c, 't', txnBatch(producerId, 0, 1, ['zombie']), 'reinit')).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
  })

  it('hands out a new producer id when the epoch is exhausted', async () => {
    const c = await open()
    const { producerId } = await init(c, 'old')
    broker!.transactionCoordinator.stateManager.transactions.get('old')!.producerEpoch = 32766
    const rotated = await init(c, 'old')
    expect(rotated.errorCode).toBe(ErrorCode.NONE)
    expect(rotated.producerId).not.toBe(producerId)
    expect(rotated.producerEpoch).toBe(0)
  })
})

describe('AddPartitionsToTxn', () => {
  it('refuses the whole request when a partition does not exist (UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED)', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'apt')
    expect(
      await addPartitions(c, 'apt', producerId, 0, [
        { name: 't', partitions: [0, 5] },
        { name: 'missing', partitions: [0] },
      ]),
    ).toEqual([
      ['t', 0, ErrorCode.OPERATION_NOT_ATTEMPTED],
      ['t', 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['missing', 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ])
    expect((await describeTxn(c, 'apt')).transactionState).toBe('Empty')
  })

  it('v4: batches transactions; verifyOnly says whether a partition is in the ongoing transaction', async () => {
    const c = await open()
    await broker!.createTopic('t', 2, {})
    const a = await init(c, 'a')
    const b = await init(c, 'b')
    const added = await c.send(addPartitionsToTxnCodec, 4, {
      transactions: [
        { transactionalId: 'a', producerId: a.producerId, producerEpoch: 0, verifyOnly: false, topics: [{ name: 't', partitions: [0] }] },
        { transactionalId: 'b', producerId: b.producerId, producerEpoch: 0, verifyOnly: false, topics: [{ name: 't', partitions: [1] }] },
      ],
      ...NO_V3_TRANSACTION,
    })
    expect(added.resultsByTransaction.map((t) => [t.transactionalId, t.topicResults[0].resultsByPartition[0].partitionErrorCode])).toEqual([
      ['a', ErrorCode.NONE],
      ['b', ErrorCode.NONE],
    ])
    const verified = await c.send(addPartitionsToTxnCodec, 4, {
      transactions: [{ transactionalId: 'a', producerId: a.producerId, producerEpoch: 0, verifyOnly: true, topics: [{ name: 't', partitions: [0, 1] }] }],
      ...NO_V3_TRANSACTION,
    })
    // Kafka 4's coordinator: a partition not in the transaction is TRANSACTION_ABORTABLE (the leader translates it for old clients).
    expect(verified.resultsByTransaction[0].topicResults[0].resultsByPartition.map((p) => p.partitionErrorCode)).toEqual([ErrorCode.NONE, ErrorCode.TRANSACTION_ABORTABLE])
    expect((await describeTxn(c, 'a')).topics).toEqual([{ topic: 't', partitions: [0] }])
  })
})

describe('EndTxn', () => {
  it('follows Kafka state machine: nothing to end is INVALID_TXN_STATE, a retried commit NONE, an abort after a commit INVALID_TXN_STATE', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'end')
    expect(await endTxn(c, 'end', producerId, 0, true)).toBe(ErrorCode.INVALID_TXN_STATE)
    await addPartitions(c, 'end', producerId, 0, [{ name: 't', partitions: [0] }])
    expect((await produce(c, 't', txnBatch(producerId, 0, 0, ['v']), 'end')).errorCode).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'end', producerId, 0, true)).toBe(ErrorCode.NONE)
    await until(
      () => describeTxn(c, 'end'),
      (d) => d.transactionState === 'CompleteCommit',
      'CompleteCommit',
    )
    expect(await endTxn(c, 'end', producerId, 0, true)).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'end', producerId, 0, false)).toBe(ErrorCode.INVALID_TXN_STATE)
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.COMMIT, producerId, 0]])
    // The partition's producer state: the transaction is closed, the marker's coordinator epoch kept.
    const described = await c.send(describeProducersCodec, 0, { topics: [{ name: 't', partitionIndexes: [0, 9] }] })
    const [p0, p9] = described.topics[0].partitions
    expect(p0.activeProducers).toEqual([expect.objectContaining({ producerId, producerEpoch: 0, lastSequence: 0, coordinatorEpoch: 0, currentTxnStartOffset: -1n })])
    expect(p9.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
  })
})

describe('transaction timeouts and transactional id expiration', () => {
  it('aborts a transaction left open past transaction.timeout.ms and fences its producer', async () => {
    const c = await open(tempDir(), { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '50' })
    await broker!.createTopic('t', 1, {})
    // Long enough that the transaction is still open when DescribeProducers looks, on a loaded machine.
    const { producerId } = await init(c, 'slow', { timeoutMs: 2000 })
    await addPartitions(c, 'slow', producerId, 0, [{ name: 't', partitions: [0] }])
    expect((await produce(c, 't', txnBatch(producerId, 0, 0, ['late']), 'slow')).errorCode).toBe(ErrorCode.NONE)
    const described = await c.send(describeProducersCodec, 0, { topics: [{ name: 't', partitionIndexes: [0] }] })
    expect(described.topics[0].partitions[0].activeProducers[0].currentTxnStartOffset).toBe(0n)
    const aborted = await until(
      () => describeTxn(c, 'slow'),
      (d) => d.transactionState === 'CompleteAbort',
      'the timeout abort',
    )
    // Fenced at 1, ended at 2 (transaction version 2's bump): the marker carries 2.
    expect(aborted.producerEpoch).toBe(2)
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.ABORT, producerId, 2]])
    expect(await endTxn(c, 'slow', producerId, 0, true)).toBe(ErrorCode.PRODUCER_FENCED)
  })

  it('removes a transactional id idle for transactional.id.expiration.ms, also after a restart', async () => {
    const dataDir = tempDir()
    const props = { 'transactional.id.expiration.ms': '100', 'transaction.remove.expired.transaction.cleanup.interval.ms': '50' }
    let c = await open(dataDir, props)
    await init(c, 'idle')
    await until(
      () => describeTxn(c, 'idle'),
      (d) => d.errorCode === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
      'expiration',
    )
    c = await open(dataDir)
    expect((await describeTxn(c, 'idle')).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
  })
})

describe('DescribeTransactions and ListTransactions', () => {
  it('describe the state of each id and list them by state, producer id and running time', async () => {
    const c = await open()
    await broker!.createTopic('t', 2, {})
    const open1 = await init(c, 'open-1')
    const empty = await init(c, 'empty-1')
    await addPartitions(c, 'open-1', open1.producerId, 0, [{ name: 't', partitions: [1, 0] }])
    const d = await describeTxn(c, 'open-1')
    expect(d).toMatchObject({
      errorCode: ErrorCode.NONE,
      transactionState: 'Ongoing',
      producerId: open1.producerId,
      producerEpoch: 0,
      transactionTimeoutMs: 60_000,
      topics: [{ topic: 't', partitions: [0, 1] }],
    })
    expect(d.transactionStartTimeMs).toBeGreaterThan(0n)
    expect((await describeTxn(c, 'unknown')).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)

    const all = await c.send(listTransactionsCodec, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: null })
    expect(all.transactionStates.map((s) => [s.transactionalId, s.transactionState]).sort()).toEqual([
      ['empty-1', 'Empty'],
      ['open-1', 'Ongoing'],
    ])
    const ongoing = await c.send(listTransactionsCodec, 0, { stateFilters: ['Ongoing', 'Bogus'], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: null })
    expect(ongoing.transactionStates.map((s) => s.transactionalId)).toEqual(['open-1'])
    expect(ongoing.unknownStateFilters).toEqual(['Bogus'])
    const byProducer = await c.send(listTransactionsCodec, 0, { stateFilters: [], producerIdFilters: [empty.producerId], durationFilter: -1n, transactionalIdPattern: null })
    expect(byProducer.transactionStates.map((s) => s.transactionalId)).toEqual(['empty-1'])
    const longRunning = await c.send(listTransactionsCodec, 1, { stateFilters: [], producerIdFilters: [], durationFilter: 3_600_000n, transactionalIdPattern: null })
    expect(longRunning.transactionStates).toEqual([])
  })
})

describe('Produce and WriteTxnMarkers at the partition', () => {
  it('refuses control batches from clients (INVALID_RECORD) and markers from an older coordinator epoch (TRANSACTION_COORDINATOR_FENCED)', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'm')
    const control = buildEndTxnMarker({ type: 'COMMIT', producerId, producerEpoch: 0, coordinatorEpoch: 0 })
    expect((await produce(c, 't', control)).errorCode).toBe(ErrorCode.INVALID_RECORD)

    const write = (coordinatorEpoch: number, producerEpoch = 0) =>
      c.send(writeTxnMarkersCodec, 1, { markers: [{ producerId: 99n, producerEpoch, transactionResult: false, topics: [{ name: 't', partitionIndexes: [0] }], coordinatorEpoch }] })
    const ok = await write(5)
    expect(ok.markers[0].topics[0].partitions[0]).toEqual({ partitionIndex: 0, errorCode: ErrorCode.NONE })
    expect((await write(4)).markers[0].topics[0].partitions[0].errorCode).toBe(ErrorCode.TRANSACTION_COORDINATOR_FENCED)
    expect((await write(6, 3)).markers[0].topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
    expect((await write(6, 2)).markers[0].topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    const missing = await c.send(writeTxnMarkersCodec, 1, {
      markers: [{ producerId: 99n, producerEpoch: 3, transactionResult: true, topics: [{ name: 'nope', partitionIndexes: [0] }], coordinatorEpoch: 6 }],
    })
    expect(missing.markers[0].topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    expect(markers(broker!, 't')).toEqual([
      [ControlRecordType.ABORT, 99n, 0],
      [ControlRecordType.ABORT, 99n, 3],
    ])
  })
})

describe('transaction verification at the partition leader (KIP-890 part 1)', () => {
  it('refuses a transactional batch for a partition not in the transaction (INVALID_TXN_STATE), or from a fenced producer; nothing is appended', async () => {
    const c = await open()
    await broker!.createTopic('t', 2, {})
    const { producerId } = await init(c, 'verify')
    await addPartitions(c, 'verify', producerId, 0, [{ name: 't', partitions: [0] }])
    const produceTo = async (partition: number, epoch: number, seq: number) => {
      const r = await c.send(produceCodec, 9, {
        transactionalId: 'verify',
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: 't', partitionData: [{ index: partition, records: txnBatch(producerId, epoch, seq, ['x']) }] }],
      })
      return r.responses[0].partitionResponses[0].errorCode
    }
    expect(await produceTo(1, 0, 0)).toBe(ErrorCode.INVALID_TXN_STATE)
    expect(broker!.logManager.getLog('t', 1)!.logEndOffset()).toBe(0n)
    expect(await produceTo(0, 0, 0)).toBe(ErrorCode.NONE)
    // A new producer of the id aborts the transaction; the zombie cannot start one in partition 1.
    expect((await init(c, 'verify')).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS)
    await until(
      () => init(c, 'verify'),
      (r) => r.errorCode === ErrorCode.NONE,
      'the re-init',
    )
    expect(await produceTo(1, 0, 0)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    expect(broker!.logManager.getLog('t', 1)!.logEndOffset()).toBe(0n)
  })

  it('is off with transaction.partition.verification.enable=false', async () => {
    const c = await open(tempDir(), { 'transaction.partition.verification.enable': 'false' })
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'unverified')
    expect((await produce(c, 't', txnBatch(producerId, 0, 0, ['x']), 'unverified')).errorCode).toBe(ErrorCode.NONE)
  })
})

describe('TxnOffsetCommit', () => {
  it('keeps offsets pending until the commit marker (requireStable: UNSTABLE_OFFSET_COMMIT), drops them on abort', async () => {
    const c = await open()
    await broker!.createTopic('in', 1, {})
    const { producerId } = await init(c, 'eos')
    const fetch = async (requireStable: boolean) =>
      (await c.send(offsetFetchCodec, 7, { groupId: 'g', topics: [{ name: 'in', partitionIndexes: [0] }], groups: [], requireStable })).topics[0].partitions[0]
    const commit = (offset: bigint, epoch = 0) =>
      c.send(txnOffsetCommitCodec, 3, {
        transactionalId: 'eos',
        groupId: 'g',
        producerId,
        producerEpoch: epoch,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'in', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
      })

    // Without AddOffsetsToTxn no marker would end it: refused (verification, KIP-890 part 1).
    expect((await commit(5n)).topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_TXN_STATE)
    expect((await c.send(addOffsetsToTxnCodec, 3, { transactionalId: 'eos', producerId, producerEpoch: 0, groupId: 'g' })).errorCode).toBe(ErrorCode.NONE)
    expect((await commit(10n)).topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
    expect(await fetch(true)).toMatchObject({ committedOffset: -1n, errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT })
    expect(await fetch(false)).toMatchObject({ committedOffset: -1n, errorCode: ErrorCode.NONE })
    expect(await endTxn(c, 'eos', producerId, 0, false)).toBe(ErrorCode.NONE)
    await until(
      () => describeTxn(c, 'eos'),
      (d) => d.transactionState === 'CompleteAbort',
      'CompleteAbort',
    )
    expect(await fetch(true)).toMatchObject({ committedOffset: -1n, errorCode: ErrorCode.NONE })

    await c.send(addOffsetsToTxnCodec, 3, { transactionalId: 'eos', producerId, producerEpoch: 0, groupId: 'g' })
    await commit(20n)
    expect(await endTxn(c, 'eos', producerId, 0, true)).toBe(ErrorCode.NONE)
    await until(
      () => fetch(true),
      (p) => p.committedOffset === 20n,
      'the committed offset',
    )
    // A new producer of the id aborts the open transaction with a marker at the bumped epoch:
    // the fenced epoch is then refused by the offsets partition's producer state.
    await c.send(addOffsetsToTxnCodec, 3, { transactionalId: 'eos', producerId, producerEpoch: 0, groupId: 'g' })
    expect((await init(c, 'eos')).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS)
    await until(
      () => init(c, 'eos'),
      (r) => r.errorCode === ErrorCode.NONE,
      'the re-init',
    )
    expect((await commit(30n, 0)).topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    expect(broker!.groupCoordinator.offsets.hasPendingTransactionalOffsets('g', 'in', 0)).toBe(false)

    // The offsets log replays to the same: 20 committed, 10 aborted.
    const dataDir = broker!.config.dataDir
    const c2 = await open(dataDir)
    const after = (await c2.send(offsetFetchCodec, 7, { groupId: 'g', topics: [{ name: 'in', partitionIndexes: [0] }], groups: [], requireStable: true })).topics[0].partitions[0]
    expect(after).toMatchObject({ committedOffset: 20n, errorCode: ErrorCode.NONE })
  })
})

describe('the coordinator after a restart', () => {
  it('loads every transactional id from __transaction_state: an ongoing transaction stays, and can be committed', async () => {
    const dataDir = tempDir()
    let c = await open(dataDir)
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'durable')
    await addPartitions(c, 'durable', producerId, 0, [{ name: 't', partitions: [0] }])
    expect((await produce(c, 't', txnBatch(producerId, 0, 0, ['kept']), 'durable')).errorCode).toBe(ErrorCode.NONE)
    c = await open(dataDir)
    expect(await describeTxn(c, 'durable')).toMatchObject({ transactionState: 'Ongoing', producerId, producerEpoch: 0, topics: [{ topic: 't', partitions: [0] }] })
    expect(await endTxn(c, 'durable', producerId, 0, true)).toBe(ErrorCode.NONE)
    await until(
      () => describeTxn(c, 'durable'),
      (d) => d.transactionState === 'CompleteCommit',
      'CompleteCommit',
    )
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.COMMIT, producerId, 0]])
    // The next init bumps the epoch the log recorded.
    expect(await init(c, 'durable')).toMatchObject({ producerId, producerEpoch: 1 })
  })

  it('completes a transaction the log left in PrepareCommit (its markers not written) when it loads', async () => {
    const dataDir = tempDir()
    let c = await open(dataDir)
    await broker!.createTopic('t', 2, {})
    const { producerId } = await init(c, 'half')
    await addPartitions(c, 'half', producerId, 0, [{ name: 't', partitions: [0, 1] }])
    expect((await produce(c, 't', txnBatch(producerId, 0, 0, ['p0']), 'half')).errorCode).toBe(ErrorCode.NONE)
    // PrepareCommit written as EndTxn writes it, and the broker gone before any marker.
    const txn = broker!.transactionCoordinator.stateManager.transactions.get('half')!
    expect(
      await broker!.transactionCoordinator.stateManager.appendTransactionToLog(txn, txn.prepareAbortOrCommit(TransactionState.PrepareCommit, BigInt(Date.now()), { tv: TransactionVersion.TV_0 })),
    ).toBe(ErrorCode.NONE)
    expect(markers(broker!, 't')).toEqual([])
    c = await open(dataDir)
    await until(
      () => describeTxn(c, 'half'),
      (d) => d.transactionState === 'CompleteCommit',
      'the commit completed after the load',
    )
    expect(markers(broker!, 't', 0)).toEqual([[ControlRecordType.COMMIT, producerId, 0]])
    expect(markers(broker!, 't', 1)).toEqual([[ControlRecordType.COMMIT, producerId, 0]])
  })
})
