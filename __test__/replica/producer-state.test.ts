/**
 * `ProducerStateManager`, one test per rule of Kafka's ProducerAppendInfo / ProducerStateEntry,
 * and the rebuild from a log's batch headers after a restart.
 */
import { describe, expect, it } from 'vitest'
import { CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK } from '../../ts/protocol/batch-header.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { buildEndTxnMarker } from '../../ts/protocol/control-record.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { lastSequenceOf, NUM_BATCHES_TO_RETAIN, ProducerStateManager, type ProducerBatch } from '../../ts/replica/producer-state.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import { silentLogger } from '../../ts/logger.js'
import { tempDir } from '../helpers/tmp.js'

const PID = 1000n

function batch(baseSequence: number, records = 1, producerEpoch = 0, producerId = PID): ProducerBatch {
  return { producerId, producerEpoch, baseSequence, lastOffsetDelta: records - 1 }
}

/** Appends `b` at `offset` when the check allows it; returns the check. */
function append(state: ProducerStateManager, b: ProducerBatch, offset: bigint) {
  const check = state.check([b])
  if (check.kind === 'append') state.update(b, offset)
  return check
}

describe('ProducerStateManager', () => {
  it('accepts the first batch of a new producer at sequence 0', () => {
    const state = new ProducerStateManager()
    expect(append(state, batch(0, 3), 0n)).toEqual({ kind: 'append' })
    expect(state.lastEntry(PID)).toMatchObject({ producerEpoch: 0, batches: [{ firstSeq: 0, lastSeq: 2, firstOffset: 0n, lastOffset: 2n }] })
  })

  it('accepts an unknown producer at any sequence (Kafka 2.5+, no UNKNOWN_PRODUCER_ID)', () => {
    const state = new ProducerStateManager()
    expect(append(state, batch(42), 0n)).toEqual({ kind: 'append' })
  })

  it('accepts the next sequence in order', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 2), 0n)
    expect(append(state, batch(2, 5), 2n)).toEqual({ kind: 'append' })
  })

  it('answers a duplicate of one of the last 5 batches with its original offsets', () => {
    const state = new ProducerStateManager()
    for (let i = 0; i < NUM_BATCHES_TO_RETAIN; i++) append(state, batch(i * 2, 2), BigInt(i * 2))
    const check = state.check([batch(0, 2)])
    expect(check).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 0n, lastOffset: 1n } })
    expect(state.check([batch(8, 2)])).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 8n } })
  })

  it('forgets batches older than the last 5: their retry is out of order', () => {
    const state = new ProducerStateManager()
    for (let i = 0; i < NUM_BATCHES_TO_RETAIN + 1; i++) append(state, batch(i), BigInt(i))
    expect(state.lastEntry(PID)!.batches).toHaveLength(NUM_BATCHES_TO_RETAIN)
    expect(state.check([batch(0)])).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER })
    expect(state.check([batch(1)])).toMatchObject({ kind: 'duplicate' })
  })

  it('does not take a batch with the same first but another last sequence for a duplicate', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 2), 0n)
    expect(state.check([batch(0, 3)])).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER })
  })

  it('refuses a sequence gap with OUT_OF_ORDER_SEQUENCE_NUMBER', () => {
    const state = new ProducerStateManager()
    append(state, batch(0), 0n)
    expect(append(state, batch(2), 1n)).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER })
    expect(state.lastEntry(PID)!.batches).toHaveLength(1)
  })

  it('refuses an older epoch with INVALID_PRODUCER_EPOCH', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 1, 3), 0n)
    expect(append(state, batch(1, 1, 2), 1n)).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH })
  })

  it('accepts a new epoch at sequence 0 and clears the retained batches', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 1, 0), 0n)
    append(state, batch(1, 1, 0), 1n)
    expect(append(state, batch(0, 1, 1), 2n)).toEqual({ kind: 'append' })
    expect(state.lastEntry(PID)).toMatchObject({ producerEpoch: 1, batches: [{ firstSeq: 0, firstOffset: 2n }] })
  })

  it('refuses a new epoch that does not start at sequence 0 with OUT_OF_ORDER_SEQUENCE_NUMBER', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 1, 0), 0n)
    expect(append(state, batch(5, 1, 1), 1n)).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER })
  })

  it('does not take a batch of another epoch for a duplicate', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 1, 0), 0n)
    expect(state.check([batch(0, 1, 1)])).toEqual({ kind: 'append' })
  })

  it('refuses a producer batch without a sequence with INVALID_RECORD', () => {
    const state = new ProducerStateManager()
    expect(state.check([batch(-1)])).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_RECORD })
  })

  it('wraps the sequence after Int32.MAX', () => {
    expect(lastSequenceOf(0x7fffffff - 1, 3)).toBe(1)
    const state = new ProducerStateManager()
    append(state, batch(0x7fffffff), 0n)
    expect(append(state, batch(0), 1n)).toEqual({ kind: 'append' })
  })

  it('checks the batches of one request against each other', () => {
    const state = new ProducerStateManager()
    append(state, batch(0), 0n)
    expect(state.check([batch(1, 2), batch(3, 1)])).toEqual({ kind: 'append' })
    expect(state.check([batch(1, 2), batch(4, 1)])).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER })
  })

  it('keeps producers apart', () => {
    const state = new ProducerStateManager()
    append(state, batch(0, 1, 0, 1n), 0n)
    append(state, batch(0, 1, 0, 2n), 1n)
    expect(state.check([batch(1, 1, 0, 1n)])).toEqual({ kind: 'append' })
    expect(state.check([batch(0, 1, 0, 2n)])).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 1n } })
  })

  it('rebuilds the state from the log after a restart (loadFromLog)', async () => {
    const dataDir = tempDir()
    const open = () => LogManager.open({ dataDir, backend: 'native', retentionCheckIntervalMs: 1_000_000, logger: silentLogger })
    const first = await open()
    const log = await first.getOrCreateLog('t', 0)
    log.append(buildBatch([{ value: 'plain' }]))
    for (let i = 0; i < 7; i++) log.append(buildBatch([{ value: `a${i}` }, { value: `b${i}` }], { producerId: 7n, producerEpoch: 2, baseSequence: i * 2 }))
    log.append(buildBatch([{ value: 'other' }], { producerId: 8n, producerEpoch: 0, baseSequence: 0 }))
    await first.close()

    const second = await open()
    try {
      const state = ProducerStateManager.loadFromLog((await second.getOrCreateLog('t', 0))!)
      expect(state.lastEntry(7n)!.producerEpoch).toBe(2)
      expect(state.lastEntry(7n)!.batches.map((b) => [b.firstSeq, b.firstOffset])).toEqual([
        [4, 5n],
        [6, 7n],
        [8, 9n],
        [10, 11n],
        [12, 13n],
      ])
      expect(state.check([batch(12, 2, 2, 7n)])).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 13n } })
      expect(state.check([batch(14, 1, 2, 7n)])).toEqual({ kind: 'append' })
      expect(state.lastEntry(8n)!.batches[0].firstOffset).toBe(15n)
    } finally {
      await second.close()
    }
  })
})

describe("ProducerStateManager joined to the log's producer state", () => {
  const open = (dataDir: string) => LogManager.open({ dataDir, backend: 'native', retentionCheckIntervalMs: 1_000_000, logger: silentLogger, defaultConfig: { segmentBytes: 4096 } })

  it("knows the last batch of a producer older than the scanned tail, from the log's snapshot (as Kafka's restart does)", async () => {
    const dataDir = tempDir()
    const first = await open(dataDir)
    const log = await first.getOrCreateLog('t', 0)
    // Producer 7's sequences wrap at Int32.MAX inside its last batch: the first sequence is recovered across the wrap.
    log.append(buildBatch([{ value: 'a' }, { value: 'b' }], { producerId: 7n, producerEpoch: 2, baseSequence: 0x7fffffff - 3 }))
    log.append(buildBatch([{ value: 'c' }, { value: 'd' }, { value: 'e' }], { producerId: 7n, producerEpoch: 2, baseSequence: 0x7fffffff - 1 }))
    log.append(buildBatch([{ value: 'txn' }], { producerId: 9n, producerEpoch: 0, baseSequence: 0, isTransactional: true }))
    for (let i = 0; i < 40; i++) log.append(buildBatch([{ value: Buffer.alloc(500, i) }]))
    log.append(buildBatch([{ value: 'txn2' }], { producerId: 9n, producerEpoch: 0, baseSequence: 1, isTransactional: true }))
    expect(log.segments().length).toBeGreaterThan(3)
    await first.close()

    const second = await open(dataDir)
    try {
      const reopened = (await second.getOrCreateLog('t', 0))!
      // A scan of the active segment only: 7 and 9's first batch lie before it.
      const state = ProducerStateManager.loadFromLog(reopened, 1)
      expect(state.lastEntry(7n)).toMatchObject({ producerEpoch: 2, batches: [{ firstSeq: 0x7fffffff - 1, lastSeq: 0, firstOffset: 2n, lastOffset: 4n }] })
      expect(state.check([batch(0x7fffffff - 1, 3, 2, 7n)])).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 2n } })
      // Only the last batch survives the snapshot (Kafka's too): the one before is out of sequence now.
      expect(state.check([batch(0x7fffffff - 3, 2, 2, 7n)])).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER })
      expect(state.check([batch(1, 1, 2, 7n)])).toEqual({ kind: 'append' })
      // 9's transaction opened before the scanned tail: the log knows where.
      expect(state.lastEntry(9n)).toMatchObject({ currentTxnFirstOffset: 5n })
      expect(state.lastEntry(9n)!.batches.map((b) => b.firstSeq)).toEqual([1])
    } finally {
      await second.close()
    }
  })

  it('expires idle producers without an open transaction (producer.id.expiration.ms)', () => {
    const state = new ProducerStateManager()
    state.update({ ...batch(0, 1, 0, 1n), maxTimestamp: 1_000n }, 0n)
    state.update({ ...batch(0, 1, 0, 2n), maxTimestamp: 1_000n, attributes: TRANSACTIONAL_FLAG_MASK }, 1n)
    state.update({ ...batch(0, 1, 0, 3n), maxTimestamp: 5_000n }, 2n)
    expect(state.removeExpiredProducers(10_000n, 9_001n)).toBe(0)
    expect(state.removeExpiredProducers(10_000n, 9_000n)).toBe(1)
    expect([...state.entries()].map((e) => e.producerId)).toEqual([2n, 3n])
  })
})

describe('ProducerStateManager: transactions and append origins', () => {
  const TXN = TRANSACTIONAL_FLAG_MASK
  const MARKER = TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK
  const txn = (baseSequence: number, producerEpoch = 0): ProducerBatch => ({ ...batch(baseSequence, 1, producerEpoch), attributes: TXN })
  const marker = (producerEpoch: number, coordinatorEpoch: number): ProducerBatch => ({ producerId: PID, producerEpoch, baseSequence: -1, lastOffsetDelta: 0, attributes: MARKER, coordinatorEpoch })

  it('remembers the first offset of the open transaction; a marker closes it and keeps the coordinator epoch', () => {
    const state = new ProducerStateManager()
    append(state, txn(0), 10n)
    append(state, txn(1), 11n)
    expect(state.lastEntry(PID)).toMatchObject({ currentTxnFirstOffset: 10n, coordinatorEpoch: -1 })
    expect(state.check([marker(0, 4)], 'COORDINATOR')).toEqual({ kind: 'append' })
    state.update(marker(0, 4), 12n)
    expect(state.lastEntry(PID)).toMatchObject({ currentTxnFirstOffset: null, coordinatorEpoch: 4, producerEpoch: 0 })
    // The sequence goes on after the marker.
    expect(state.check([txn(2)])).toEqual({ kind: 'append' })
  })

  it('refuses control batches from clients, markers of an older producer epoch or coordinator epoch', () => {
    const state = new ProducerStateManager()
    append(state, txn(0, 3), 0n)
    expect(state.check([marker(3, 0)])).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_RECORD })
    expect(state.check([marker(2, 0)], 'COORDINATOR')).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH })
    state.update(marker(3, 5), 1n)
    expect(state.check([marker(3, 4)], 'COORDINATOR')).toMatchObject({ kind: 'error', errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED })
    expect(state.check([marker(4, 5)], 'COORDINATOR')).toEqual({ kind: 'append' })
  })

  it("holds a transaction version 2 marker (WriteTxnMarkers v2, KIP-1228) above the transaction's epoch; one at it is a retry once the transaction is closed", () => {
    const state = new ProducerStateManager()
    append(state, txn(0, 3), 0n)
    const tv2 = (producerEpoch: number): ProducerBatch => ({ ...marker(producerEpoch, 0), transactionVersion: 2 })
    // At the epoch of the open transaction's batches: a marker not bumped by its coordinator.
    expect(state.check([tv2(3)], 'COORDINATOR')).toMatchObject({
      kind: 'error',
      errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
      message: expect.stringContaining('not above the last seen epoch 3 (TV2)'),
    })
    expect(state.check([tv2(2)], 'COORDINATOR')).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH })
    // Version 0/1 (and WriteTxnMarkers v1): not below is enough.
    expect(state.check([{ ...marker(3, 0), transactionVersion: 1 }], 'COORDINATOR')).toEqual({ kind: 'append' })
    expect(state.check([tv2(4)], 'COORDINATOR')).toEqual({ kind: 'append' })
    state.update(tv2(4), 1n)
    expect(state.lastEntry(PID)).toMatchObject({ producerEpoch: 4, currentTxnFirstOffset: null })
    // The coordinator writing the same marker again (no transaction open): written again, as Kafka.
    expect(state.check([tv2(4)], 'COORDINATOR')).toEqual({ kind: 'append' })
    // Once the next transaction (at the bumped epoch) is open, that marker is stale.
    append(state, txn(0, 4), 2n)
    expect(state.check([tv2(4)], 'COORDINATOR')).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH })
  })

  it('checks only the epoch of the coordinator data batches (no sequence), as Kafka does for AppendOrigin.COORDINATOR', () => {
    const state = new ProducerStateManager()
    append(state, txn(0, 2), 0n)
    const offsets: ProducerBatch = { producerId: PID, producerEpoch: 2, baseSequence: -1, lastOffsetDelta: 0, attributes: TXN }
    expect(state.check([offsets])).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_RECORD })
    expect(state.check([offsets], 'COORDINATOR')).toEqual({ kind: 'append' })
    expect(state.check([{ ...offsets, producerEpoch: 1 }], 'COORDINATOR')).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH })
  })

  it('rebuilds open transactions and markers from the log (loadFromLog)', async () => {
    const dataDir = tempDir()
    const open = () => LogManager.open({ dataDir, backend: 'native', retentionCheckIntervalMs: 1_000_000, logger: silentLogger })
    const first = await open()
    const log = await first.getOrCreateLog('t', 0)
    log.append(buildBatch([{ value: 'a' }], { producerId: 7n, producerEpoch: 1, baseSequence: 0, isTransactional: true }))
    log.appendAsFollower(withOffset(buildEndTxnMarker({ type: 'COMMIT', producerId: 7n, producerEpoch: 1, coordinatorEpoch: 3 }), log.logEndOffset()))
    log.append(buildBatch([{ value: 'b' }], { producerId: 8n, producerEpoch: 0, baseSequence: 0, isTransactional: true }))
    await first.close()

    const second = await open()
    try {
      const state = ProducerStateManager.loadFromLog((await second.getOrCreateLog('t', 0))!)
      expect(state.lastEntry(7n)).toMatchObject({ producerEpoch: 1, coordinatorEpoch: 3, currentTxnFirstOffset: null })
      expect(state.lastEntry(8n)).toMatchObject({ currentTxnFirstOffset: 2n })
    } finally {
      await second.close()
    }
  })
})

/** A copy of a batch at `offset` (baseOffset is outside the CRC). */
function withOffset(batchBytes: Buffer, offset: bigint): Buffer {
  const copy = Buffer.from(batchBytes)
  copy.writeBigInt64BE(offset, 0)
  return copy
}
