/**
 * The partition leader's side of WriteTxnMarkers (Kafka's `KafkaApis.handleWriteTxnMarkersRequest`):
 * for each marker, one control batch (ts/protocol/control-record.ts) appended to each of its
 * partitions with origin COORDINATOR and acks=all, answered per partition once the ISR holds it.
 * The marker's transaction version (WriteTxnMarkers v2, KIP-1228; 0 from v1) decides its producer
 * epoch check: a transaction version 2 marker must be above the epoch of the transaction's
 * batches (ts/replica/producer-state.ts).
 * The transaction coordinator calls it directly for the partitions this broker leads, and the
 * WriteTxnMarkers handler for a coordinator on another broker.
 *
 * A marker that reaches `__consumer_offsets` ends the transaction's offset commits there: once
 * it is on the ISR, the group coordinator makes them visible (COMMIT) or drops them (ABORT), as
 * Kafka's `onTransactionCompleted`.
 */
import { OFFSETS_TOPIC } from '../group/offsets-topic.js'
import type { WritableTxnMarker, WritableTxnMarkerResult } from '../protocol/apis/write-txn-markers.js'
import { buildEndTxnMarker } from '../protocol/control-record.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { ACKS_ALL } from '../replica/partition.js'
import type { AppendRecordsResult, ReplicaManager } from '../replica/replica-manager.js'
import { kafkaErrorCodeOf } from '../storage/errors.js'

/** How long a marker waits for its partition's ISR (Kafka: request.timeout.ms). */
export const DEFAULT_MARKER_TIMEOUT_MS = 30_000

export interface TxnMarkerWriterDeps {
  replicaManager: Pick<ReplicaManager, 'appendRecords' | 'maybeAddDelayedProduce'>
  /** A marker is on the ISR of `__consumer_offsets` partition `partition`. */
  onOffsetsMarker(producerId: bigint, commit: boolean, partition: number): void
  timeoutMs?: number
}

type Tp = { topic: string; partition: number }

export class TxnMarkerWriter {
  private readonly deps: TxnMarkerWriterDeps

  constructor(deps: TxnMarkerWriterDeps) {
    this.deps = deps
  }

  /** Writes every marker; the errors per producer, topic and partition, in the request's order. */
  async writeTxnMarkers(markers: readonly WritableTxnMarker[]): Promise<WritableTxnMarkerResult[]> {
    return Promise.all(markers.map((m) => this.writeMarker(m)))
  }

  private async writeMarker(marker: WritableTxnMarker): Promise<WritableTxnMarkerResult> {
    const type = marker.transactionResult ? 'COMMIT' : 'ABORT'
    const tps: Tp[] = marker.topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition })))
    const appends = await Promise.all(
      tps.map(async (tp): Promise<Tp & { result: AppendRecordsResult }> => {
        try {
          const batch = buildEndTxnMarker({ type, producerId: marker.producerId, producerEpoch: marker.producerEpoch, coordinatorEpoch: marker.coordinatorEpoch })
          const r = this.deps.replicaManager.appendRecords(tp, batch, ACKS_ALL, 'COORDINATOR', marker.transactionVersion)
          return { ...tp, result: r instanceof Promise ? await r : r }
        } catch (err) {
          return { ...tp, result: { errorCode: kafkaErrorCodeOf(err), errorMessage: (err as Error).message, info: null, logStartOffset: -1n, partition: null, leaderEpoch: -1 } }
        }
      }),
    )
    const codes = await new Promise<number[]>((resolve) => {
      this.deps.replicaManager.maybeAddDelayedProduce(ACKS_ALL, this.deps.timeoutMs ?? DEFAULT_MARKER_TIMEOUT_MS, appends, (results) => resolve(results.map((r) => r.errorCode)))
    })
    const errors = new Map<string, number>()
    tps.forEach((tp, i) => {
      errors.set(`${tp.topic}\0${tp.partition}`, codes[i]!)
      if (codes[i] === ErrorCode.NONE && tp.topic === OFFSETS_TOPIC) this.deps.onOffsetsMarker(marker.producerId, marker.transactionResult, tp.partition)
    })
    return {
      producerId: marker.producerId,
      topics: marker.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: errors.get(`${t.name}\0${partitionIndex}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR })),
      })),
    }
  }
}
