/**
 * Appends (Kafka's `UnifiedLog.appendAsLeader` / `appendAsFollower`), docs/storage.md "Appends".
 *
 * Every batch of the buffer is checked before anything is written; a refused batch refuses the
 * whole append. Then each batch goes to the active segment, rolling first when it would not fit
 * (segment.bytes, segment.ms, a full index, a relative offset past u32), and epochs greater than
 * the latest cached one are recorded, and the batch is applied to the producer state (an ABORT
 * marker's transaction goes to the segment's `.txnindex`, log-producer-state.ts). Flushing after an append is the caller's (`JsLog`) business.
 *
 * An append is all or nothing, as in Kafka: if any write fails (a full disk), everything it did
 * is undone before the error is thrown (`LogState.rollbackAppend`): segments it rolled are
 * deleted, the `.log` of the segment active before it is cut back, index entries it added are
 * dropped (a roll's trim undone), the segment's size, max timestamp and bytes since the last
 * index entry are put back, and so are the LEO, the leader epochs, the producer state and the
 * transaction index entries (snapshots of rolls it made go with their segments). The epoch checkpoint is
 * written last, so a failure leaves it as it was. If undoing fails the log goes offline
 * (LOG_OFFLINE) until it is opened again.
 *
 * A class rather than functions because it owns one log's reusable buffers: the checked
 * batches' positions and the saved headers of a leader append.
 */
import { basename } from 'node:path'
import { ATTRIBUTES_OFFSET, MAX_TIMESTAMP_OFFSET, PARTITION_LEADER_EPOCH_OFFSET, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_MASK, updateCrc } from '../../protocol/batch-header.js'
import { StorageError } from '../errors.js'
import type { AppendOrigin, LogAppendInfo } from '../types.js'
import { IncomingBatches } from './incoming-batches.js'
import { MAX_RELATIVE_OFFSET } from './log-segment.js'
import { applyAppendedBatch } from './log-producer-state.js'
import type { LogState } from './log-state.js'

export class LogAppender {
  private readonly log: LogState
  private readonly incoming = new IncomingBatches()
  private headerScratch = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD * 16)

  constructor(log: LogState) {
    this.log = log
  }

  appendAsLeader(batches: Buffer, leaderEpoch: number, nowMs: number, origin: AppendOrigin = 'CLIENT'): LogAppendInfo {
    const log = this.log
    log.checkOpen()
    if (!Number.isInteger(leaderEpoch) || leaderEpoch < -1 || leaderEpoch > 0x7fffffff) {
      throw new StorageError('INVALID_ARGUMENT', `invalid leader epoch ${leaderEpoch}`)
    }
    return this.appendCheckedAsLeader(batches, this.incoming.checkLeader(batches, log.config, { nowMs, topicPartition: basename(log.dir) }, origin), leaderEpoch, nowMs)
  }

  /**
   * The second half of appendAsLeader: batches `inc` holds the leader's checks of (against the
   * log's config now), as `JsLog.appendAsLeaderAsync` makes them.
   */
  appendCheckedAsLeader(batches: Buffer, inc: IncomingBatches, leaderEpoch: number, nowMs: number): LogAppendInfo {
    const log = this.log
    log.checkOpen()
    if (!Number.isInteger(leaderEpoch) || leaderEpoch < -1 || leaderEpoch > 0x7fffffff) {
      throw new StorageError('INVALID_ARGUMENT', `invalid leader epoch ${leaderEpoch}`)
    }
    if (inc.count === 0) return this.emptyAppendInfo()
    // Everything validated: assign offsets, stamp the epoch (both outside the CRC), and with
    // LogAppendTime set the timestamp type and maxTimestamp and recompute the CRC. The headers
    // are put back afterwards: the caller's buffer is left as it was (as in the Rust engine).
    const saved = this.saveHeaders(batches, inc)
    try {
      const logAppendTime = log.config.messageTimestampType === 'LogAppendTime'
      const now = BigInt(nowMs)
      let next = log.logEndOffset
      for (let i = 0; i < inc.count; i++) {
        const at = inc.starts[i]!
        batches.writeBigInt64BE(next, at)
        batches.writeInt32BE(leaderEpoch, at + PARTITION_LEADER_EPOCH_OFFSET)
        if (logAppendTime) {
          batches.writeInt16BE(batches.readInt16BE(at + ATTRIBUTES_OFFSET) | TIMESTAMP_TYPE_MASK, at + ATTRIBUTES_OFFSET)
          batches.writeBigInt64BE(now, at + MAX_TIMESTAMP_OFFSET)
          updateCrc(batches, at)
        }
        next += BigInt(inc.lastDeltas[i]!) + 1n
      }
      return this.appendValidated(batches, inc, nowMs, logAppendTime ? now : -1n)
    } finally {
      this.restoreHeaders(batches, inc, saved)
    }
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    this.log.checkOpen()
    const inc = this.incoming.checkFollower(batches, this.log.logEndOffset)
    if (inc.count === 0) return this.emptyAppendInfo()
    return this.appendValidated(batches, inc, Date.now(), -1n)
  }

  /** Copies the header of each incoming batch aside. */
  private saveHeaders(buf: Buffer, inc: IncomingBatches): Buffer {
    const need = inc.count * RECORD_BATCH_OVERHEAD
    if (this.headerScratch.length < need) this.headerScratch = Buffer.allocUnsafe(Math.max(need, 2 * this.headerScratch.length))
    for (let i = 0; i < inc.count; i++) buf.copy(this.headerScratch, i * RECORD_BATCH_OVERHEAD, inc.starts[i], inc.starts[i]! + RECORD_BATCH_OVERHEAD)
    return this.headerScratch
  }

  private restoreHeaders(buf: Buffer, inc: IncomingBatches, saved: Buffer): void {
    for (let i = 0; i < inc.count; i++) saved.copy(buf, inc.starts[i], i * RECORD_BATCH_OVERHEAD, (i + 1) * RECORD_BATCH_OVERHEAD)
  }

  /** Writes checked batches (rolling per batch as needed) and records new leader epochs; all or nothing. */
  private appendValidated(buf: Buffer, inc: IncomingBatches, nowMs: number, logAppendTime: bigint): LogAppendInfo {
    const log = this.log
    const mark = log.markAppend()
    try {
      const info = this.writeBatches(buf, inc, nowMs, logAppendTime)
      log.producerState.commit()
      return info
    } catch (err) {
      try {
        log.rollbackAppend(mark)
      } catch (undo) {
        log.offline = `an append failed (${(err as Error).message}) and could not be undone (${(undo as Error).message})`
      }
      throw err
    }
  }

  private writeBatches(buf: Buffer, inc: IncomingBatches, nowMs: number, logAppendTime: bigint): LogAppendInfo {
    const log = this.log
    const { segmentBytes, segmentMs } = log.config
    const firstOffset = log.logEndOffset
    let maxTimestamp = -1n
    let offsetOfMaxTimestamp = -1n
    let recordCount = 0
    let validBytes = 0
    for (let i = 0; i < inc.count; i++) {
      const at = inc.starts[i]!
      const size = inc.sizes[i]!
      const baseOffset = log.logEndOffset
      const lastOffset = baseOffset + BigInt(inc.lastDeltas[i]!)
      let seg = log.active()
      const lastRel = Number(lastOffset - seg.baseOffset)
      if (seg.size > 0 && (seg.size + size > segmentBytes || nowMs - seg.createdMs > segmentMs || seg.isFull() || lastRel > MAX_RELATIVE_OFFSET)) {
        seg = log.rollAt(baseOffset, nowMs)
      }
      const ts = buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET)
      seg.append(buf, at, size, Number(lastOffset - seg.baseOffset), ts, nowMs)
      log.logEndOffset = lastOffset + 1n
      applyAppendedBatch(log, seg, buf, at, baseOffset, log.highWatermark)
      if (ts > maxTimestamp) {
        maxTimestamp = ts
        offsetOfMaxTimestamp = lastOffset
      }
      const epoch = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET)
      if (epoch >= 0) {
        const latest = log.epochs.latestEpoch()
        if (latest === null || epoch > latest) log.epochs.assignIfNewer(epoch, baseOffset)
      }
      recordCount += inc.records[i]!
      validBytes += size
    }
    // New epochs, or a checkpoint an earlier write failed to bring up to date.
    if (log.epochs.isBehind()) log.epochs.write()
    return {
      firstOffset,
      lastOffset: log.logEndOffset - 1n,
      maxTimestamp,
      offsetOfMaxTimestamp,
      logAppendTime,
      logStartOffset: log.logStartOffset,
      recordCount,
      batchCount: inc.count,
      validBytes,
    }
  }

  private emptyAppendInfo(): LogAppendInfo {
    return {
      firstOffset: -1n,
      lastOffset: -1n,
      maxTimestamp: -1n,
      offsetOfMaxTimestamp: -1n,
      logAppendTime: -1n,
      logStartOffset: this.log.logStartOffset,
      recordCount: 0,
      batchCount: 0,
      validBytes: 0,
    }
  }
}
