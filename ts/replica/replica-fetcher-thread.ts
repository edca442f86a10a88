/**
 * Kafka's `ReplicaFetcherThread` and `RemoteLeaderEndPoint`: a follower's fetcher from one
 * leader broker (ts/replica/abstract-fetcher-thread.ts runs the loop and its rules).
 *
 * The end point (`RemoteLeaderEndPoint`) is the client core: a NetworkClient connection to the
 * source broker (ApiVersions first; the versions used are the highest both sides serve) and one
 * FetchSessionHandler (KIP-227: full fetch first, incremental ones after). Each Fetch is a
 * replica's: replicaId (v4-14) or ReplicaState {replicaId, replicaEpoch} (v15+), maxWaitMs
 * replica.fetch.wait.max.ms (500), minBytes replica.fetch.min.bytes (1), maxBytes
 * replica.fetch.response.max.bytes (10 MiB), per partition replica.fetch.max.bytes (1 MiB),
 * READ_UNCOMMITTED, each partition with its currentLeaderEpoch, lastFetchedEpoch and our log
 * start offset; topics by id (v13+). ListOffsets EARLIEST / LATEST go out as this replica
 * (the leader answers LATEST with its log end, not its high watermark).
 *
 * The thread's `processPartitionData` is Kafka's: the fetch offset must be our log end (else the
 * partition fails: someone else moved the log), the records are appended as follower (offsets
 * and epochs kept, every batch checked), then the high watermark becomes min(log end, the
 * leader's) and the log start offset rises to the leader's; fetches parked on the follower
 * (consumers reading from it, KIP-392) are woken when the high watermark moved.
 *
 * The connection speaks the inter-broker listener's security (`security`,
 * ts/server/inter-broker-security.ts): TLS and SASL as that listener's settings say.
 */
import { fetchRequestFor, FETCH_TOPIC_IDS_FROM, FetchSessionHandler } from '../client/fetch-session-handler.js'
import type { ClientSecurity } from '../client/client-security.js'
import { NetworkClient } from '../client/network-client.js'
import type { Logger } from '../logger.js'
import { fetchCodec, type FetchResponse, type PartitionData } from '../protocol/apis/fetch.js'
import { listOffsetsCodec, type ListOffsetsRequest } from '../protocol/apis/list-offsets.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { LogAppendInfo } from '../storage/types.js'
import {
  AbstractFetcherThread,
  LeaderPartitionError,
  tpKey,
  type FetchResult,
  type LeaderEndPoint,
  type OffsetTruncationState,
  type PartitionFetchState,
  type SentPartition,
} from './abstract-fetcher-thread.js'
import type { TopicPartition } from './fetch-params.js'
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, type Partition } from './partition.js'
import type { BrokerEndPoint } from './partition-registration.js'

/** Kafka's replica.fetch.* defaults. */
export const DEFAULT_REPLICA_FETCH_WAIT_MAX_MS = 500
export const DEFAULT_REPLICA_FETCH_MIN_BYTES = 1
export const DEFAULT_REPLICA_FETCH_MAX_BYTES = 1024 * 1024
export const DEFAULT_REPLICA_FETCH_RESPONSE_MAX_BYTES = 10 * 1024 * 1024
/** The first Fetch version whose partitions carry lastFetchedEpoch (and whose answers divergingEpoch). */
const LAST_FETCHED_EPOCH_FROM = 12

export interface ReplicaFetcherConfig {
  /** replica.fetch.wait.max.ms (500). */
  fetchWaitMaxMs?: number
  /** replica.fetch.min.bytes (1). */
  fetchMinBytes?: number
  /** replica.fetch.max.bytes (1 MiB), per partition. */
  fetchMaxBytes?: number
  /** replica.fetch.response.max.bytes (10 MiB). */
  fetchResponseMaxBytes?: number
  /** replica.fetch.backoff.ms (1000). */
  fetchBackOffMs?: number
  /** request.timeout.ms of the fetcher's connection (30000); a Fetch may take maxWaitMs more. */
  requestTimeoutMs?: number
}

/** What a fetcher needs of this broker's partitions (the ReplicaManager gives it). */
export interface FollowerPartitions {
  /** The partition when this broker follows it (not its leader), else undefined. */
  followerPartition(tp: TopicPartition): Partition | undefined
  /** The follower's high watermark or log start offset moved: parked fetches on it re-check. */
  followerOffsetsMoved(tp: TopicPartition): void
}

/** Kafka's `RemoteLeaderEndPoint`: Fetch and ListOffsets to one broker, through the client core. */
export class RemoteLeaderEndPoint implements LeaderEndPoint {
  readonly client: NetworkClient
  readonly session: FetchSessionHandler
  private readonly brokerId: number
  private readonly brokerEpoch: bigint
  private readonly config: Required<ReplicaFetcherConfig>
  private readonly logStartOffsetOf: (tp: TopicPartition) => bigint

  constructor(
    source: BrokerEndPoint,
    options: {
      brokerId: number
      brokerEpoch?: bigint
      clientId: string
      config: Required<ReplicaFetcherConfig>
      logStartOffset: (tp: TopicPartition) => bigint
      security?: ClientSecurity | (() => ClientSecurity)
    },
  ) {
    this.brokerId = options.brokerId
    this.brokerEpoch = options.brokerEpoch ?? -1n
    this.config = options.config
    this.logStartOffsetOf = options.logStartOffset
    this.client = new NetworkClient({ bootstrapServers: `${source.host}:${source.port}`, clientId: options.clientId, requestTimeoutMs: options.config.requestTimeoutMs, security: options.security })
    this.session = new FetchSessionHandler(source.id)
  }

  /** The source broker, as the client knows it (the only bootstrap server). */
  private get node(): number {
    return this.client.bootstrapNodes[0]!.nodeId
  }

  /** Our brokers answer v12+; one that would not gets the Truncating path (truncation to the HW). */
  get isTruncationOnFetchSupported(): boolean {
    if (!this.client.isReady(this.node)) return true
    return this.client.versionFor(this.node, fetchCodec) >= LAST_FETCHED_EPOCH_FROM
  }

  async fetch(partitions: ReadonlyArray<{ tp: TopicPartition; state: PartitionFetchState }>): Promise<FetchResult> {
    const builder = this.session.newBuilder()
    for (const { tp, state } of partitions) {
      builder.add(tp, {
        topicId: state.topicId,
        fetchOffset: state.fetchOffset,
        logStartOffset: this.logStartOffsetOf(tp),
        maxBytes: this.config.fetchMaxBytes,
        currentLeaderEpoch: state.currentLeaderEpoch,
        lastFetchedEpoch: state.lastFetchedEpoch,
      })
    }
    const data = builder.build()
    const sent = new Map<string, SentPartition>()
    for (const { tp, data: d } of data.sessionPartitions.values()) sent.set(tpKey(tp), { tp, fetchOffset: d.fetchOffset, currentLeaderEpoch: d.currentLeaderEpoch })
    let version = -1
    let response: FetchResponse
    try {
      response = await this.client.request(
        this.node,
        fetchCodec,
        (v) => {
          version = v
          return fetchRequestFor(data, v, {
            replicaId: this.brokerId,
            replicaEpoch: this.brokerEpoch,
            maxWaitMs: this.config.fetchWaitMaxMs,
            minBytes: this.config.fetchMinBytes,
            maxBytes: this.config.fetchResponseMaxBytes,
            isolationLevel: 0,
          })
        },
        { maxVersion: data.canUseTopicIds ? undefined : FETCH_TOPIC_IDS_FROM - 1, timeoutMs: this.config.requestTimeoutMs + this.config.fetchWaitMaxMs },
      )
    } catch (err) {
      this.session.handleError(err)
      throw err
    }
    if (!this.session.handleResponse(response, version)) {
      // A session the leader lost or refused: the next fetch is a full one, at once.
      const sessionError = response.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND || response.errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH
      return { sent, partitions: new Map(), unusable: !sessionError }
    }
    const byKey = new Map<string, PartitionData>()
    for (const [k, p] of this.session.responsePartitions(response, version)) {
      const entry = data.sessionPartitions.get(k)
      if (entry) byKey.set(tpKey(entry.tp), p)
    }
    return { sent, partitions: byKey }
  }

  fetchEarliestOffset(tp: TopicPartition, currentLeaderEpoch: number): Promise<{ offset: bigint; epoch: number }> {
    return this.listOffset(tp, currentLeaderEpoch, EARLIEST_TIMESTAMP)
  }

  fetchLatestOffset(tp: TopicPartition, currentLeaderEpoch: number): Promise<{ offset: bigint; epoch: number }> {
    return this.listOffset(tp, currentLeaderEpoch, LATEST_TIMESTAMP)
  }

  private async listOffset(tp: TopicPartition, currentLeaderEpoch: number, timestamp: bigint): Promise<{ offset: bigint; epoch: number }> {
    const request: ListOffsetsRequest = {
      replicaId: this.brokerId,
      isolationLevel: 0,
      topics: [{ name: tp.topic, partitions: [{ partitionIndex: tp.partition, currentLeaderEpoch, timestamp }] }],
      timeoutMs: 0,
    }
    const res = await this.client.request(this.node, listOffsetsCodec, request)
    const p = res.topics.find((t) => t.name === tp.topic)?.partitions.find((x) => x.partitionIndex === tp.partition)
    if (!p) throw new LeaderPartitionError(ErrorCode.UNKNOWN_SERVER_ERROR, `ListOffsets from broker ${this.session.node} did not answer ${tpKey(tp)}`)
    if (p.errorCode !== ErrorCode.NONE) throw new LeaderPartitionError(p.errorCode, `ListOffsets ${timestamp} of ${tpKey(tp)} from broker ${this.session.node}: error ${p.errorCode}`)
    return { offset: p.offset, epoch: p.leaderEpoch }
  }

  close(): Promise<void> {
    return this.client.close()
  }
}

export interface ReplicaFetcherThreadOptions {
  fetcherId: number
  brokerId: number
  brokerEpoch?: bigint
  sourceBroker: BrokerEndPoint
  partitions: FollowerPartitions
  config: Required<ReplicaFetcherConfig>
  logger: Logger
  onPartitionFailed?: (tp: TopicPartition) => void
  /** The inter-broker listener's security (default PLAINTEXT). */
  security?: ClientSecurity | (() => ClientSecurity)
}

export class ReplicaFetcherThread extends AbstractFetcherThread {
  readonly fetcherId: number
  private readonly replicas: FollowerPartitions

  constructor(options: ReplicaFetcherThreadOptions) {
    const name = `ReplicaFetcherThread-${options.fetcherId}-${options.sourceBroker.id}`
    const replicas = options.partitions
    const leader = new RemoteLeaderEndPoint(options.sourceBroker, {
      brokerId: options.brokerId,
      brokerEpoch: options.brokerEpoch,
      clientId: `broker-${options.brokerId}-fetcher-${options.fetcherId}`,
      config: options.config,
      logStartOffset: (tp) => replicas.followerPartition(tp)?.log.logStartOffset() ?? -1n,
      security: options.security,
    })
    super({ name, sourceBroker: options.sourceBroker, leader, fetchBackOffMs: options.config.fetchBackOffMs, logger: options.logger, onPartitionFailed: options.onPartitionFailed })
    this.fetcherId = options.fetcherId
    this.replicas = replicas
  }

  private partitionOrThrow(tp: TopicPartition): Partition {
    const partition = this.replicas.followerPartition(tp)
    if (!partition) throw new Error(`this broker does not follow ${tpKey(tp)}`)
    return partition
  }

  protected processPartitionData(tp: TopicPartition, fetchOffset: bigint, data: PartitionData): LogAppendInfo | null {
    const partition = this.partitionOrThrow(tp)
    const log = partition.log
    if (fetchOffset !== log.logEndOffset()) throw new Error(`offset mismatch for ${tpKey(tp)}: fetched offset ${fetchOffset}, log end offset ${log.logEndOffset()}`)
    const records = data.records ?? Buffer.alloc(0)
    const info = records.length > 0 ? partition.appendRecordsToFollower(records) : emptyAppend(log.logStartOffset())
    if (partition.updateFollowerOffsets(data.highWatermark, data.logStartOffset) || info.batchCount > 0) this.replicas.followerOffsetsMoved(tp)
    return info
  }

  protected async truncate(tp: TopicPartition, state: OffsetTruncationState): Promise<void> {
    await this.partitionOrThrow(tp).truncateTo(state.offset)
  }

  protected async truncateFullyAndStartAt(tp: TopicPartition, offset: bigint): Promise<void> {
    await this.partitionOrThrow(tp).truncateFullyAndStartAt(offset)
  }

  protected latestEpoch(tp: TopicPartition): number | null {
    return this.replicas.followerPartition(tp)?.log.latestEpoch() ?? null
  }

  protected logStartOffset(tp: TopicPartition): bigint {
    return this.partitionOrThrow(tp).log.logStartOffset()
  }

  protected logEndOffset(tp: TopicPartition): bigint {
    return this.partitionOrThrow(tp).log.logEndOffset()
  }

  protected highWatermark(tp: TopicPartition): bigint {
    return this.partitionOrThrow(tp).log.highWatermark()
  }

  protected endOffsetForEpoch(tp: TopicPartition, epoch: number): { epoch: number; endOffset: bigint } | null {
    const end = this.partitionOrThrow(tp).log.endOffsetForEpoch(epoch)
    return end === null || end.epoch < 0 ? null : end
  }
}

function emptyAppend(logStartOffset: bigint): LogAppendInfo {
  return { firstOffset: -1n, lastOffset: -1n, maxTimestamp: -1n, offsetOfMaxTimestamp: -1n, logAppendTime: -1n, logStartOffset, recordCount: 0, batchCount: 0, validBytes: 0 }
}
