/**
 * `__transaction_state` as an ordinary compacted topic on a real broker: with small segments
 * (transaction.state.log.segment.bytes) and a fast log cleaner, many transactions leave a log
 * cleaned to each transactional id's latest record; the tombstones of expired ids go once their
 * delete.retention.ms passed; a restart loads the right state of every id, and the removed ones
 * stay removed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../../ts/client/network-client.js'
import { TRANSACTION_STATE_TOPIC } from '../../../ts/coordinator/transaction/transaction-log.js'
import { addPartitionsToTxnCodec } from '../../../ts/protocol/apis/add-partitions-to-txn.js'
import { describeTransactionsCodec } from '../../../ts/protocol/apis/describe-transactions.js'
import { endTxnCodec } from '../../../ts/protocol/apis/end-txn.js'
import { initProducerIdCodec } from '../../../ts/protocol/apis/init-producer-id.js'
import { produceCodec } from '../../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import type { Broker } from '../../../ts/server/broker.js'
import type { Log } from '../../../ts/storage/log.js'
import { startBroker } from '../../helpers/broker.js'
import { tempDir } from '../../helpers/tmp.js'

let broker: Broker | undefined
let client: NetworkClient | undefined
afterEach(async () => {
  await client?.close()
  await broker?.stop()
  client = broker = undefined
})

/**
 * Small transaction-log segments, a cleaner that cleans anything dirty at once, tombstones kept
 * 0 ms; one partition, so that every id's records are in the one log looked at.
 */
const CLEANING = {
  'transaction.state.log.num.partitions': '1',
  'transaction.state.log.segment.bytes': '1024',
  'log.cleaner.backoff.ms': '20',
  'log.cleaner.min.cleanable.ratio': '0.01',
  'log.cleaner.delete.retention.ms': '0',
}

async function open(dataDir: string, props: Record<string, string> = {}): Promise<NetworkClient> {
  await client?.close()
  await broker?.stop()
  broker = await startBroker({ dataDir, props: { ...CLEANING, ...props } })
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
  return client
}

async function describeTxn(c: NetworkClient, id: string) {
  return (await c.send(describeTransactionsCodec, 0, { transactionalIds: [id] })).transactionStates[0]
}

async function until<T>(read: () => Promise<T> | T, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = await read()
    if (ok(v)) return v
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** One transaction of `id`: a record to t-0, then EndTxn; resolves once it completed. */
async function transaction(c: NetworkClient, id: string, producerId: bigint, producerEpoch: number, sequence: number, commit: boolean): Promise<void> {
  const added = await c.send(addPartitionsToTxnCodec, 3, {
    transactions: [],
    v3AndBelowTransactionalId: id,
    v3AndBelowProducerId: producerId,
    v3AndBelowProducerEpoch: producerEpoch,
    v3AndBelowTopics: [{ name: 't', partitions: [0] }],
  })
  expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).toBe(ErrorCode.NONE)
  const records = buildBatch([{ value: `${id}-${sequence}` }], { producerId, producerEpoch, baseSequence: sequence, isTransactional: true })
  const produced = await c.send(produceCodec, 9, { transactionalId: id, acks: -1, timeoutMs: 5000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] })
  expect(produced.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE)
  expect((await c.send(endTxnCodec, 3, { transactionalId: id, producerId, producerEpoch, committed: commit })).errorCode).toBe(ErrorCode.NONE)
  const done = commit ? 'CompleteCommit' : 'CompleteAbort'
  await until(
    () => describeTxn(c, id),
    (d) => d.transactionState === done,
    `${id} ${done}`,
  )
}

/** The transactional ids of the records in the transaction log, tombstones as `-id`. */
function txnLogKeys(log: Log): string[] {
  return log.readRecords(log.logStartOffset(), { maxBytes: 1 << 24, isolation: 'LOG_END' }).map((r) => {
    const id = r.key!.subarray(4).toString()
    return r.value === null ? `-${id}` : id
  })
}

const txnLog = () => broker!.logManager.getLog(TRANSACTION_STATE_TOPIC, 0)!

/** Whether the cleaner cleaned the transaction log up to its active segment. */
function cleanedToActive(): boolean {
  const log = txnLog()
  const checkpoint = broker!.logManager.cleaner!.manager.allCleanerCheckpoints().get(`${TRANSACTION_STATE_TOPIC}-0`)
  return checkpoint !== undefined && checkpoint === log.segments().at(-1)!.baseOffset
}

describe('__transaction_state cleaned by the log cleaner', () => {
  it("many transactions are cleaned to each id's latest state, expired ids leave no tombstone behind, and a restart loads the same states", async () => {
    const dataDir = tempDir()
    // Two ids that expire (idle past transactional.id.expiration.ms): tombstones in the log.
    let c = await open(dataDir, { 'transactional.id.expiration.ms': '100', 'transaction.remove.expired.transaction.cleanup.interval.ms': '50' })
    for (const id of ['gone-1', 'gone-2']) {
      expect((await c.send(initProducerIdCodec, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })).errorCode).toBe(ErrorCode.NONE)
      await until(
        () => describeTxn(c, id),
        (d) => d.errorCode === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
        `${id} expired`,
      )
    }
    expect(txnLogKeys(txnLog())).toEqual(expect.arrayContaining(['-gone-1', '-gone-2']))

    c = await open(dataDir)
    await broker!.createTopic('t', 1, {})
    const ids = ['a', 'b', 'c']
    const producers = new Map<string, { producerId: bigint; producerEpoch: number }>()
    for (const id of ids) {
      const r = await c.send(initProducerIdCodec, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })
      expect(r.errorCode).toBe(ErrorCode.NONE)
      producers.set(id, r)
    }
    for (let round = 0; round < 12; round++) {
      for (const [i, id] of ids.entries()) {
        const { producerId, producerEpoch } = producers.get(id)!
        // a commits every transaction, b aborts every one, c alternates (its last aborts).
        await transaction(c, id, producerId, producerEpoch, round, i === 0 || (i === 2 && round % 2 === 0))
      }
    }
    // An ongoing transaction of a fourth id, left open.
    const d = await c.send(initProducerIdCodec, 4, { transactionalId: 'd', transactionTimeoutMs: 600_000, producerId: -1n, producerEpoch: -1 })
    const added = await c.send(addPartitionsToTxnCodec, 3, {
      transactions: [],
      v3AndBelowTransactionalId: 'd',
      v3AndBelowProducerId: d.producerId,
      v3AndBelowProducerEpoch: d.producerEpoch,
      v3AndBelowTopics: [{ name: 't', partitions: [0] }],
    })
    expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).toBe(ErrorCode.NONE)

    const before = new Map<string, unknown>()
    for (const id of [...ids, 'd']) before.set(id, await describeTxn(c, id))
    expect(before.get('a')).toMatchObject({ transactionState: 'CompleteCommit' })
    expect(before.get('b')).toMatchObject({ transactionState: 'CompleteAbort' })
    expect(before.get('c')).toMatchObject({ transactionState: 'CompleteAbort' })
    expect(before.get('d')).toMatchObject({ transactionState: 'Ongoing', topics: [{ topic: 't', partitions: [0] }] })

    expect(txnLog().config).toMatchObject({ cleanupPolicy: ['compact'], segmentBytes: 1024 })
    expect(broker!.logManager.getLog('__consumer_offsets', 0)!.config).toMatchObject({ cleanupPolicy: ['compact'], segmentBytes: 104_857_600 })
    const end = txnLog().logEndOffset()
    expect(end).toBeGreaterThan(100n)
    // Cleaned: the sealed segments hold one record per id at most, the tombstones are gone.
    await until(
      () => cleanedToActive() && !txnLogKeys(txnLog()).some((k) => k.startsWith('-')),
      (ok) => ok,
      'the transaction log cleaned',
    )
    const keys = txnLogKeys(txnLog())
    expect(keys.length).toBeLessThan(20)
    expect(keys.filter((k) => k.includes('gone'))).toEqual([])
    expect(txnLog().logStartOffset()).toBe(0n)

    c = await open(dataDir)
    for (const id of [...ids, 'd']) expect(await describeTxn(c, id)).toEqual(before.get(id))
    for (const id of ['gone-1', 'gone-2']) expect((await describeTxn(c, id)).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    // The loaded state goes on: d commits, a's next init bumps the epoch it had.
    expect((await c.send(endTxnCodec, 3, { transactionalId: 'd', producerId: d.producerId, producerEpoch: d.producerEpoch, committed: true })).errorCode).toBe(ErrorCode.NONE)
    await until(
      () => describeTxn(c, 'd'),
      (s) => s.transactionState === 'CompleteCommit',
      'd committed',
    )
    const a = producers.get('a')!
    expect(await c.send(initProducerIdCodec, 4, { transactionalId: 'a', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })).toMatchObject({
      errorCode: ErrorCode.NONE,
      producerId: a.producerId,
      producerEpoch: a.producerEpoch + 1,
    })
  }, 120_000)
})
