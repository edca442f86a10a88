/**
 * Transaction version 2 (KIP-890 part 2) through a socket, as a Kafka 4 client speaks it: the
 * `transaction.version` feature in ApiVersions, partitions added by the transactional Produce
 * v12 and TxnOffsetCommit v5 themselves, EndTxn v5 bumping the epoch at every end (the markers
 * carry it, the answer gives it, retries are told by it, an exhausted epoch moves to a new
 * producer id), and the version 0 requests still served with version 0's rules.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../../ts/client/network-client.js'
import { apiVersionsCodec } from '../../../ts/protocol/apis/api-versions.js'
import { describeTransactionsCodec } from '../../../ts/protocol/apis/describe-transactions.js'
import { endTxnCodec } from '../../../ts/protocol/apis/end-txn.js'
import { initProducerIdCodec } from '../../../ts/protocol/apis/init-producer-id.js'
import { offsetFetchCodec } from '../../../ts/protocol/apis/offset-fetch.js'
import { produceCodec, type PartitionProduceResponse } from '../../../ts/protocol/apis/produce.js'
import { txnOffsetCommitCodec } from '../../../ts/protocol/apis/txn-offset-commit.js'
import { buildBatch } from '../../../ts/protocol/batch-builder.js'
import { ControlRecordType } from '../../../ts/protocol/control-record.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import { partitionFor } from '../../../ts/coordinator/partition-for.js'
import { decodeTxnLogValue } from '../../../ts/coordinator/transaction/transaction-log.js'
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

async function open(dataDir = tempDir()): Promise<NetworkClient> {
  await client?.close()
  await broker?.stop()
  broker = await startBroker({ dataDir })
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
  return client
}

const init = (c: NetworkClient, transactionalId: string) => c.send(initProducerIdCodec, 5, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })

const endTxn = (c: NetworkClient, transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean, version = 5) =>
  c.send(endTxnCodec, version, { transactionalId, producerId, producerEpoch, committed })

async function produce(c: NetworkClient, version: number, topic: string, partition: number, batch: Buffer, transactionalId: string): Promise<PartitionProduceResponse> {
  const response = await c.send(produceCodec, version, { transactionalId, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }] })
  return response.responses[0].partitionResponses[0]
}

const txnBatch = (producerId: bigint, producerEpoch: number, baseSequence: number, values: string[]) =>
  buildBatch(
    values.map((value) => ({ value })),
    { producerId, producerEpoch, baseSequence, isTransactional: true },
  )

async function describeTxn(c: NetworkClient, id: string) {
  return (await c.send(describeTransactionsCodec, 0, { transactionalIds: [id] })).transactionStates[0]
}

/** [type, producerId, producerEpoch] of each marker in the partition. */
function markers(b: Broker, topic: string, partition = 0): Array<[number, bigint, number]> {
  const log = b.logManager.getLog(topic, partition)!
  return log
    .readBatches(log.logStartOffset(), { isolation: 'LOG_END' })
    .filter((batch) => batch.isControl)
    .map((batch) => [batch.records[0].key!.readInt16BE(2), batch.producerId, batch.producerEpoch])
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

const completed = (c: NetworkClient, id: string) =>
  until(
    () => describeTxn(c, id),
    (d) => d.transactionState === 'CompleteCommit' || d.transactionState === 'CompleteAbort',
    `${id} completed`,
  )

describe('the transaction.version feature', () => {
  it('is finalized at 2 and supported 0-2, as on a new Kafka 4.4 cluster (v3 leaves out supported features starting at 0)', async () => {
    const c = await open()
    const v4 = await c.send(apiVersionsCodec, 4, { clientSoftwareName: 't', clientSoftwareVersion: '1' })
    expect(v4.finalizedFeatures).toContainEqual({ name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 })
    expect(v4.supportedFeatures).toContainEqual({ name: 'transaction.version', minVersion: 0, maxVersion: 2 })
    expect(v4.finalizedFeaturesEpoch).toBeGreaterThanOrEqual(0n)
    const v3 = await c.send(apiVersionsCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' })
    expect(v3.finalizedFeatures).toEqual(v4.finalizedFeatures)
    expect(v3.supportedFeatures).toEqual([])
  })
})

describe('Produce v12: the partition joins the transaction with the first batch', () => {
  it('adds the partition (no AddPartitionsToTxn); v11 and v10 only verify, answered TRANSACTION_ABORTABLE and INVALID_TXN_STATE', async () => {
    const c = await open()
    await broker!.createTopic('t', 3, {})
    const { producerId, producerEpoch } = await init(c, 'p')
    expect(producerEpoch).toBe(0)
    expect((await produce(c, 11, 't', 1, txnBatch(producerId, 0, 0, ['v11']), 'p')).errorCode).toBe(ErrorCode.TRANSACTION_ABORTABLE)
    expect((await produce(c, 10, 't', 2, txnBatch(producerId, 0, 0, ['v10']), 'p')).errorCode).toBe(ErrorCode.INVALID_TXN_STATE)
    expect((await describeTxn(c, 'p')).transactionState).toBe('Empty')
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 0, 0, ['a']), 'p')).errorCode).toBe(ErrorCode.NONE)
    expect(await describeTxn(c, 'p')).toMatchObject({ transactionState: 'Ongoing', topics: [{ topic: 't', partitions: [0] }] })
    // Once open in the partition, the next batches append without asking.
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 0, 1, ['b']), 'p')).errorCode).toBe(ErrorCode.NONE)
    expect((await produce(c, 12, 't', 1, txnBatch(producerId, 0, 0, ['c']), 'p')).errorCode).toBe(ErrorCode.NONE)
    expect((await describeTxn(c, 'p')).topics).toEqual([{ topic: 't', partitions: [0, 1] }])
    // A fenced epoch is refused, and adds nothing.
    expect((await produce(c, 12, 't', 2, txnBatch(producerId, 7, 0, ['x']), 'p')).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    expect((await describeTxn(c, 'p')).topics).toEqual([{ topic: 't', partitions: [0, 1] }])
  })
})

describe('EndTxn v5: the epoch bumped at every end', () => {
  it('answers the bumped epoch, writes the markers with it, tells retries by the epoch, and refuses the old epoch afterwards', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'e')
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 0, 0, ['one']), 'e')).errorCode).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'e', producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId, producerEpoch: 1 })
    expect(await completed(c, 'e')).toMatchObject({ transactionState: 'CompleteCommit', producerEpoch: 1 })
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.COMMIT, producerId, 1]])
    // The same EndTxn again (its answer lost): a retry, NONE with the epoch already given.
    expect(await endTxn(c, 'e', producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId, producerEpoch: 1 })
    // Abort from the old epoch is not a retry of the commit; a commit at the new epoch has nothing to commit.
    expect((await endTxn(c, 'e', producerId, 0, false)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE)
    expect((await endTxn(c, 'e', producerId, 1, true)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE)
    // A late batch of the ended transaction (old epoch) is fenced at the partition.
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 0, 1, ['late']), 'e')).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    // The next transaction, at epoch 1 from sequence 0, aborted: its marker at epoch 2.
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 1, 0, ['two']), 'e')).errorCode).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'e', producerId, 1, false)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 2 })
    await completed(c, 'e')
    expect(markers(broker!, 't')).toEqual([
      [ControlRecordType.COMMIT, producerId, 1],
      [ControlRecordType.ABORT, producerId, 2],
    ])
    // An abort with nothing in the transaction is allowed (the client may not know whether it began): epoch 3, no marker.
    expect(await endTxn(c, 'e', producerId, 2, false)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 3 })
    expect(await completed(c, 'e')).toMatchObject({ transactionState: 'CompleteAbort', producerEpoch: 3 })
    expect(markers(broker!, 't')).toHaveLength(2)
    // Another epoch altogether: PRODUCER_FENCED; another producer id: INVALID_PRODUCER_ID_MAPPING.
    expect((await endTxn(c, 'e', producerId, 9, false)).errorCode).toBe(ErrorCode.PRODUCER_FENCED)
    expect((await endTxn(c, 'e', producerId + 1n, 3, false)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    // Nothing ongoing and a commit: INVALID_TXN_STATE (Empty after InitProducerId too).
    const again = await init(c, 'e')
    expect(again.producerEpoch).toBe(4)
    expect((await endTxn(c, 'e', producerId, 4, true)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE)
  })

  it('records the client version in __transaction_state (TransactionLogValue v1, clientTransactionVersion 2) and keeps it over a restart', async () => {
    const dataDir = tempDir()
    let c = await open(dataDir)
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'log')
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 0, 0, ['x']), 'log')).errorCode).toBe(ErrorCode.NONE)
    expect((await endTxn(c, 'log', producerId, 0, true)).producerEpoch).toBe(1)
    await completed(c, 'log')
    const log = broker!.logManager.getLog('__transaction_state', partitionFor('log', broker!.config.transactionStateLogNumPartitions))!
    const values = log
      .readBatches(log.logStartOffset(), { isolation: 'LOG_END' })
      .flatMap((b) => b.records)
      .map((r) => ({ version: r.value!.readInt16BE(0), ...decodeTxnLogValue(r.value!) }))
    expect(values.map((v) => [v.version, v.state, v.producerEpoch, v.clientTransactionVersion])).toEqual([
      [1, 0, 0, 0], // Empty (InitProducerId)
      [1, 1, 0, 2], // Ongoing (Produce v12's add)
      [1, 2, 1, 2], // PrepareCommit, the epoch bumped
      [1, 4, 1, 2], // CompleteCommit
    ])
    c = await open(dataDir)
    const loaded = await until(
      () => describeTxn(c, 'log'),
      (d) => d.errorCode === ErrorCode.NONE,
      'the load',
    )
    expect(loaded).toMatchObject({ transactionState: 'CompleteCommit', producerEpoch: 1 })
    // A retry of the EndTxn after the restart is still told apart by its epoch.
    expect(await endTxn(c, 'log', producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 })
  })

  it('moves to a new producer id when the epoch is exhausted: the marker at the last epoch, the answer the new id at epoch 0', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'x')
    // Straight to the last epoch a client may use (Short.MAX_VALUE - 1), as ~32k transactions would.
    const txn = broker!.transactionCoordinator.stateManager.transactions.get('x')!
    txn.producerEpoch = 32766
    expect((await produce(c, 12, 't', 0, txnBatch(producerId, 32766, 0, ['last']), 'x')).errorCode).toBe(ErrorCode.NONE)
    const ended = await endTxn(c, 'x', producerId, 32766, true)
    expect(ended.errorCode).toBe(ErrorCode.NONE)
    expect(ended.producerId).not.toBe(producerId)
    expect(ended.producerEpoch).toBe(0)
    expect(await completed(c, 'x')).toMatchObject({ transactionState: 'CompleteCommit', producerId: ended.producerId, producerEpoch: 0 })
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.COMMIT, producerId, 32767]])
    // The retry with the old id and epoch: NONE, the same answer.
    expect(await endTxn(c, 'x', producerId, 32766, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: ended.producerId, producerEpoch: 0 })
    // The new id works at once.
    expect((await produce(c, 12, 't', 0, txnBatch(ended.producerId, 0, 0, ['first']), 'x')).errorCode).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'x', ended.producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: ended.producerId, producerEpoch: 1 })
  })

  it('serves version 0 to EndTxn v4: no bump, the old answer (-1), the markers at the producer epoch', async () => {
    const c = await open()
    await broker!.createTopic('t', 1, {})
    const { producerId } = await init(c, 'old')
    // A v0 client adds partitions first (AddPartitionsToTxn v3) and keeps its epoch.
    const { addPartitionsToTxnCodec } = await import('../../../ts/protocol/apis/add-partitions-to-txn.js')
    const added = await c.send(addPartitionsToTxnCodec, 3, {
      transactions: [],
      v3AndBelowTransactionalId: 'old',
      v3AndBelowProducerId: producerId,
      v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: 't', partitions: [0] }],
    })
    expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).toBe(ErrorCode.NONE)
    expect((await produce(c, 11, 't', 0, txnBatch(producerId, 0, 0, ['a']), 'old')).errorCode).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'old', producerId, 0, true, 4)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: -1n, producerEpoch: -1 })
    expect(await completed(c, 'old')).toMatchObject({ transactionState: 'CompleteCommit', producerEpoch: 0 })
    expect(markers(broker!, 't')).toEqual([[ControlRecordType.COMMIT, producerId, 0]])
    // Version 0's rules: a retry is the same epoch; an abort after a commit INVALID_TXN_STATE.
    expect((await endTxn(c, 'old', producerId, 0, true, 4)).errorCode).toBe(ErrorCode.NONE)
    expect((await endTxn(c, 'old', producerId, 0, false, 4)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE)
  })
})

describe('TxnOffsetCommit v5: the offsets partition joins the transaction with the commit', () => {
  it('commits offsets without AddOffsetsToTxn, visible once EndTxn v5 commits; v4 only verifies (TRANSACTION_ABORTABLE)', async () => {
    const c = await open()
    await broker!.createTopic('in', 1, {})
    const { producerId } = await init(c, 'eos')
    const commit = (version: number, offset: bigint, epoch: number) =>
      c.send(txnOffsetCommitCodec, version, {
        transactionalId: 'eos',
        groupId: 'g',
        producerId,
        producerEpoch: epoch,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'in', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
      })
    const fetch = async () => (await c.send(offsetFetchCodec, 7, { groupId: 'g', topics: [{ name: 'in', partitionIndexes: [0] }], groups: [], requireStable: true })).topics[0].partitions[0]
    expect((await commit(4, 5n, 0)).topics[0].partitions[0].errorCode).toBe(ErrorCode.TRANSACTION_ABORTABLE)
    expect((await commit(5, 10n, 0)).topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
    expect((await describeTxn(c, 'eos')).topics).toEqual([{ topic: '__consumer_offsets', partitions: [partitionFor('g', broker!.config.offsetsTopicNumPartitions)] }])
    expect(await fetch()).toMatchObject({ errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT })
    expect(await endTxn(c, 'eos', producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 })
    await completed(c, 'eos')
    expect(await until(fetch, (p) => p.errorCode === ErrorCode.NONE, 'stable offsets')).toMatchObject({ committedOffset: 10n })
    // The next transaction's commit, at the bumped epoch, after the marker at that epoch.
    expect((await commit(5, 20n, 1)).topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
    expect(await endTxn(c, 'eos', producerId, 1, false)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 2 })
    await completed(c, 'eos')
    expect(await until(fetch, (p) => p.errorCode === ErrorCode.NONE, 'stable offsets')).toMatchObject({ committedOffset: 10n })
  })
})
