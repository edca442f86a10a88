/**
 * Producer ids from the cluster (Kafka's `ProducerIdManager`, with the ZooKeeper era's
 * `/latest_producer_id_block`): a broker takes a block of 1000 ids at a time by a
 * compare-and-swap of the key `producer-ids` ({@link ProducerIdBlockRecord}: the last block handed
 * out; absent: none yet, the first block starts at 0), and hands its ids out one by one. Two
 * brokers racing for a block: one write wins, the other reads again and takes the next block, so
 * no id is ever handed out twice in the cluster. Ids are int64 (bigint); past 2^63-1 the cluster
 * is exhausted (UNKNOWN_SERVER_ERROR, as Kafka).
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { ClusterMetadataError } from './errors.js'
import { PRODUCER_IDS, decode, encode, type ProducerIdBlockRecord } from './keys.js'
import { compare, op, type MetadataStore } from './metadata-store.js'

/** Kafka's `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`. */
export const PRODUCER_ID_BLOCK_SIZE = 1000
const MAX_PRODUCER_ID = (1n << 63n) - 1n

export interface ProducerIdsBlock {
  readonly assignedBrokerId: number
  readonly firstProducerId: bigint
  readonly size: number
}

export interface ProducerIdManagerOptions {
  store: MetadataStore
  brokerId: number
  blockSize?: number
}

export class ProducerIdManager {
  private readonly store: MetadataStore
  private readonly brokerId: number
  private readonly blockSize: number
  private block: ProducerIdsBlock | null = null
  private next = 0n
  private pending: Promise<ProducerIdsBlock> | null = null

  constructor(options: ProducerIdManagerOptions) {
    this.store = options.store
    this.brokerId = options.brokerId
    this.blockSize = options.blockSize ?? PRODUCER_ID_BLOCK_SIZE
  }

  /** The next producer id of this broker (Kafka's `generateProducerId`). */
  async generateProducerId(): Promise<bigint> {
    for (;;) {
      const b = this.block
      if (b && this.next < b.firstProducerId + BigInt(b.size)) return this.next++
      this.pending ??= this.allocateBlock().finally(() => {
        this.pending = null
      })
      const fresh = await this.pending
      if (this.block !== fresh) {
        this.block = fresh
        this.next = fresh.firstProducerId
      }
    }
  }

  /** Takes the next block in the cluster by compare-and-swap on `producer-ids`. */
  async allocateBlock(): Promise<ProducerIdsBlock> {
    for (;;) {
      const kv = await this.store.get(PRODUCER_IDS)
      const last = kv ? decode<ProducerIdBlockRecord>(kv.value) : null
      const first = last ? BigInt(last.firstProducerId) + BigInt(last.size) : 0n
      if (first + BigInt(this.blockSize) - 1n > MAX_PRODUCER_ID) {
        throw new ClusterMetadataError(ErrorCode.UNKNOWN_SERVER_ERROR, "Exhausted all producerIds as the next block's end producerId would exceed int64")
      }
      const record: ProducerIdBlockRecord = { assignedBrokerId: this.brokerId, firstProducerId: first.toString(), size: this.blockSize }
      const guard = kv ? compare.modRevision(PRODUCER_IDS, '==', kv.modRevision) : compare.createRevision(PRODUCER_IDS, '==', 0)
      const put = await this.store.txn({ compare: [guard], success: [op.put(PRODUCER_IDS, encode(record))] })
      if (put.succeeded) return { assignedBrokerId: this.brokerId, firstProducerId: first, size: this.blockSize }
    }
  }
}
