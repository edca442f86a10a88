/**
 * Kafka's `TransactionMarkerChannelManager`: writes the COMMIT or ABORT marker of an ending
 * transaction to every partition in it, at the partition's leader: this broker's own partitions
 * through the local marker writer (ts/server/txn-marker-writer.ts, the replica manager with
 * origin COORDINATOR), the others with a WriteTxnMarkers request to their leader, at the highest
 * version both serve (v2 carries the transaction's version, KIP-1228).
 *
 * Per partition, as Kafka's `TransactionMarkerRequestCompletionHandler`: NONE is done; a topic
 * that no longer exists is done (its partitions leave the transaction); a coordinator epoch
 * fenced (TRANSACTION_COORDINATOR_FENCED) or a producer epoch moved on (INVALID_PRODUCER_EPOCH)
 * ends the sending (another coordinator owns the transaction now); anything else (no leader, not
 * the leader, ISR too small, timed out, the connection lost) is tried again after
 * `retryBackoffMs`, at the leader the metadata then names, for as long as this coordinator is
 * the transaction's (`stillCurrent`).
 */
import type { ClientSecurity } from '../../client/client-security.js'
import { NetworkClient } from '../../client/network-client.js'
import type { Logger } from '../../logger.js'
import { writeTxnMarkersCodec, type WritableTxnMarker, type WritableTxnMarkerResult } from '../../protocol/apis/write-txn-markers.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export const DEFAULT_MARKER_RETRY_BACKOFF_MS = 100

type Tp = { topic: string; partition: number }

/** Where markers go: what the coordinator needs of its broker. */
export interface MarkerDestinations {
  readonly brokerId: number
  /** The leader of a partition per the metadata; undefined when it has none now. */
  leaderOf(tp: Tp): number | undefined
  topicExists(topic: string): boolean
  /** A live broker's address. */
  endpoint(brokerId: number): { host: string; port: number } | undefined
  /** Writes markers to partitions this broker leads. */
  writeLocal(markers: WritableTxnMarker[]): Promise<WritableTxnMarkerResult[]>
  /** The inter-broker listener's security (ts/server/inter-broker-security.ts); default PLAINTEXT. */
  security?(): ClientSecurity
}

export interface TxnMarkerEntry {
  transactionalId: string
  producerId: bigint
  producerEpoch: number
  commit: boolean
  coordinatorEpoch: number
  /** The transaction's version (its `clientTransactionVersion`), sent in WriteTxnMarkers v2. */
  transactionVersion: number
  partitions: Tp[]
}

export class TransactionMarkerChannelManager {
  private readonly destinations: MarkerDestinations
  private readonly logger: Logger
  private readonly retryBackoffMs: number
  private readonly clients = new Map<number, Promise<NetworkClient>>()
  private stopped = false

  constructor(destinations: MarkerDestinations, logger: Logger, retryBackoffMs = DEFAULT_MARKER_RETRY_BACKOFF_MS) {
    this.destinations = destinations
    this.logger = logger
    this.retryBackoffMs = retryBackoffMs
  }

  /**
   * Writes the marker to every partition of the entry. Resolves true once all are written (or
   * left the transaction with their topic), false when the sending ended first (fenced,
   * `stillCurrent` turned false, or stopped).
   */
  async sendMarkers(entry: TxnMarkerEntry, stillCurrent: () => boolean): Promise<boolean> {
    let pending = entry.partitions
    while (pending.length > 0) {
      if (this.stopped || !stillCurrent()) return false
      const byLeader = new Map<number, Tp[]>()
      const retry: Tp[] = []
      for (const tp of pending) {
        if (!this.destinations.topicExists(tp.topic)) continue
        const leader = this.destinations.leaderOf(tp)
        if (leader === undefined) retry.push(tp)
        else byLeader.set(leader, [...(byLeader.get(leader) ?? []), tp])
      }
      const outcomes = await Promise.all([...byLeader].map(([leader, tps]) => this.send(leader, entry, tps)))
      for (const outcome of outcomes) {
        if (outcome === 'fenced') return false
        retry.push(...outcome)
      }
      pending = retry
      if (pending.length > 0) {
        this.logger.debug('retrying transaction markers', { transactionalId: entry.transactionalId, partitions: pending.length })
        await new Promise((resolve) => setTimeout(resolve, this.retryBackoffMs).unref())
      }
    }
    return true
  }

  /** One WriteTxnMarkers to one leader: the partitions to try again, or 'fenced'. */
  private async send(leader: number, entry: TxnMarkerEntry, tps: Tp[]): Promise<Tp[] | 'fenced'> {
    const topics = new Map<string, number[]>()
    for (const tp of tps) topics.set(tp.topic, [...(topics.get(tp.topic) ?? []), tp.partition])
    const marker: WritableTxnMarker = {
      producerId: entry.producerId,
      producerEpoch: entry.producerEpoch,
      transactionResult: entry.commit,
      topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
      coordinatorEpoch: entry.coordinatorEpoch,
      // WriteTxnMarkers v2's (KIP-1228); a leader serving v1 only drops it (an ignorable field) and checks the epoch as version 0's.
      transactionVersion: entry.transactionVersion,
    }
    let results: WritableTxnMarkerResult[]
    try {
      results = leader === this.destinations.brokerId ? await this.destinations.writeLocal([marker]) : await this.sendRemote(leader, marker)
    } catch (err) {
      this.logger.warn('transaction markers not sent', { transactionalId: entry.transactionalId, leader, error: (err as Error).message })
      return tps
    }
    const retry: Tp[] = []
    for (const t of results[0]?.topics ?? []) {
      for (const p of t.partitions) {
        switch (p.errorCode) {
          case ErrorCode.NONE:
            break
          case ErrorCode.TRANSACTION_COORDINATOR_FENCED:
          case ErrorCode.INVALID_PRODUCER_EPOCH:
            this.logger.warn('transaction markers fenced: another coordinator or producer epoch took over', {
              transactionalId: entry.transactionalId,
              topic: t.name,
              partition: p.partitionIndex,
              errorCode: p.errorCode,
            })
            return 'fenced'
          case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            if (!this.destinations.topicExists(t.name)) break
            retry.push({ topic: t.name, partition: p.partitionIndex })
            break
          default:
            retry.push({ topic: t.name, partition: p.partitionIndex })
        }
      }
    }
    return retry
  }

  private async sendRemote(brokerId: number, marker: WritableTxnMarker): Promise<WritableTxnMarkerResult[]> {
    let client = this.clients.get(brokerId)
    if (!client) {
      const endpoint = this.destinations.endpoint(brokerId)
      if (!endpoint) throw new Error(`broker ${brokerId} is not alive`)
      client = NetworkClient.connect(`${endpoint.host}:${endpoint.port}`, { clientId: `broker-${this.destinations.brokerId}-txn-marker-sender`, security: this.destinations.security?.() })
      this.clients.set(brokerId, client)
    }
    try {
      const c = await client
      return (await c.request(c.bootstrapNodes[0]!.nodeId, writeTxnMarkersCodec, { markers: [marker] })).markers
    } catch (err) {
      // Connected afresh next time (the broker may have moved or restarted).
      this.clients.delete(brokerId)
      void client.then((c) => c.close()).catch(() => {})
      throw err
    }
  }

  /** Ends every sending and closes the connections to other brokers. */
  async stop(): Promise<void> {
    this.stopped = true
    const clients = [...this.clients.values()]
    this.clients.clear()
    await Promise.all(clients.map((c) => c.then((c) => c.close()).catch(() => {})))
  }
}
