/**
 * Kafka's `Persister` and `DefaultStatePersister`: how a share partition's leader keeps its state
 * with the share coordinator (ts/coordinator/share/share-coordinator.ts). The share coordinator of
 * a share partition is the leader of the partition of `__share_group_state` its key hashes to:
 * this broker's own coordinator when it leads that partition (called in process), else another
 * broker's, reached with the inter-broker requests (InitializeShareGroupState,
 * ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState) over a connection of the
 * inter-broker listener's security, kept per broker. The group coordinator reads share
 * partitions' summaries through it too (ReadShareGroupStateSummary: DescribeShareGroupOffsets).
 *
 * Retriable answers (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, a
 * lost connection: the coordinator moves or loads) are retried after a backoff doubling from
 * RETRY_BACKOFF_MS to RETRY_BACKOFF_MAX_MS, MAX_ATTEMPTS times at most, as Kafka's
 * `PersisterStateManager` retries with its backoff; then the last error is the answer.
 */
import type { ClientSecurity } from '../client/client-security.js'
import { NetworkClient } from '../client/network-client.js'
import type { ShareCoordinator, ShareStateResult } from '../coordinator/share/share-coordinator.js'
import type { ReadStateData, ReadStateSummaryData, WriteStateData } from '../coordinator/share/share-coordinator-shard.js'
import type { ShareStateKey } from '../coordinator/share/share-group-state-topic.js'
import type { Logger } from '../logger.js'
import { deleteShareGroupStateCodec } from '../protocol/apis/delete-share-group-state.js'
import { initializeShareGroupStateCodec } from '../protocol/apis/initialize-share-group-state.js'
import { readShareGroupStateCodec } from '../protocol/apis/read-share-group-state.js'
import { readShareGroupStateSummaryCodec } from '../protocol/apis/read-share-group-state-summary.js'
import { writeShareGroupStateCodec } from '../protocol/apis/write-share-group-state.js'
import { ErrorCode } from '../protocol/error-codes.js'

export type { ReadStateData, ReadStateSummaryData, ShareStateKey, ShareStateResult, WriteStateData }

export const RETRY_BACKOFF_MS = 50
export const RETRY_BACKOFF_MAX_MS = 1000
export const MAX_ATTEMPTS = 20

/** Kafka's `Persister`, one share partition at a time. */
export interface Persister {
  initializeState(key: ShareStateKey, stateEpoch: number, startOffset: bigint): Promise<ShareStateResult<null>>
  readState(key: ShareStateKey, leaderEpoch: number): Promise<ShareStateResult<ReadStateData>>
  writeState(key: ShareStateKey, data: WriteStateData): Promise<ShareStateResult<null>>
  deleteState(key: ShareStateKey): Promise<ShareStateResult<null>>
  readStateSummary(key: ShareStateKey): Promise<ShareStateResult<ReadStateSummaryData>>
  stop(): Promise<void>
}

export interface DefaultStatePersisterOptions {
  brokerId: number
  /** This broker's share coordinator. */
  coordinator: ShareCoordinator
  /** Makes `__share_group_state` exist (created when first needed); throws when it cannot be. */
  ensureTopic: () => Promise<void>
  /** The leader of a partition of `__share_group_state`, when it has one. */
  leaderOf: (partition: number) => number | undefined
  /** Where another broker listens (the inter-broker listener). */
  endpoint: (brokerId: number) => { host: string; port: number } | undefined
  security?: () => ClientSecurity
  logger: Logger
}

const RETRIABLE: ReadonlySet<number> = new Set([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE])

export class DefaultStatePersister implements Persister {
  private readonly clients = new Map<number, Promise<NetworkClient>>()
  private stopped = false

  constructor(private readonly options: DefaultStatePersisterOptions) {}

  initializeState(key: ShareStateKey, stateEpoch: number, startOffset: bigint): Promise<ShareStateResult<null>> {
    return this.call(
      key,
      (c) => c.initializeState(key, stateEpoch, startOffset),
      async (client, nodeId) => {
        const r = await client.request(nodeId, initializeShareGroupStateCodec, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, stateEpoch, startOffset }] }],
        })
        const p = r.results[0]?.partitions[0]
        return { errorCode: p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: p?.errorMessage ?? null, data: null }
      },
    )
  }

  readState(key: ShareStateKey, leaderEpoch: number): Promise<ShareStateResult<ReadStateData>> {
    return this.call(
      key,
      (c) => c.readState(key, leaderEpoch),
      async (client, nodeId) => {
        const r = await client.request(nodeId, readShareGroupStateCodec, { groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, leaderEpoch }] }] })
        const p = r.results[0]?.partitions[0]
        if (p === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null, data: null }
        const data = p.errorCode === ErrorCode.NONE ? { stateEpoch: p.stateEpoch, startOffset: p.startOffset, stateBatches: p.stateBatches } : null
        return { errorCode: p.errorCode, errorMessage: p.errorMessage, data }
      },
    )
  }

  writeState(key: ShareStateKey, data: WriteStateData): Promise<ShareStateResult<null>> {
    return this.call(
      key,
      (c) => c.writeState(key, data),
      async (client, nodeId) => {
        const r = await client.request(nodeId, writeShareGroupStateCodec, { groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, ...data }] }] })
        const p = r.results[0]?.partitions[0]
        return { errorCode: p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: p?.errorMessage ?? null, data: null }
      },
    )
  }

  deleteState(key: ShareStateKey): Promise<ShareStateResult<null>> {
    return this.call(
      key,
      (c) => c.deleteState(key),
      async (client, nodeId) => {
        const r = await client.request(nodeId, deleteShareGroupStateCodec, { groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition }] }] })
        const p = r.results[0]?.partitions[0]
        return { errorCode: p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: p?.errorMessage ?? null, data: null }
      },
    )
  }

  readStateSummary(key: ShareStateKey): Promise<ShareStateResult<ReadStateSummaryData>> {
    return this.call(
      key,
      (c) => c.readStateSummary(key),
      async (client, nodeId) => {
        const r = await client.request(nodeId, readShareGroupStateSummaryCodec, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, leaderEpoch: 0 }] }],
        })
        const p = r.results[0]?.partitions[0]
        if (p === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null, data: null }
        const data = p.errorCode === ErrorCode.NONE ? { stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch, startOffset: p.startOffset, deliveryCompleteCount: p.deliveryCompleteCount } : null
        return { errorCode: p.errorCode, errorMessage: p.errorMessage, data }
      },
    )
  }

  async stop(): Promise<void> {
    this.stopped = true
    const clients = [...this.clients.values()]
    this.clients.clear()
    await Promise.all(clients.map((c) => c.then((c) => c.close()).catch(() => {})))
  }

  /** One attempt after another until an answer that is not retriable, or MAX_ATTEMPTS. */
  private async call<T>(
    key: ShareStateKey,
    local: (coordinator: ShareCoordinator) => Promise<ShareStateResult<T>>,
    remote: (client: NetworkClient, nodeId: number) => Promise<ShareStateResult<T>>,
  ): Promise<ShareStateResult<T>> {
    let backoff = RETRY_BACKOFF_MS
    let last: ShareStateResult<T> = { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null, data: null }
    for (let attempt = 0; attempt < MAX_ATTEMPTS && !this.stopped; attempt++) {
      if (attempt > 0) {
        await new Promise((resolve) => setTimeout(resolve, backoff))
        backoff = Math.min(backoff * 2, RETRY_BACKOFF_MAX_MS)
      }
      last = await this.attempt(key, local, remote)
      if (!RETRIABLE.has(last.errorCode)) return last
    }
    return last
  }

  private async attempt<T>(
    key: ShareStateKey,
    local: (coordinator: ShareCoordinator) => Promise<ShareStateResult<T>>,
    remote: (client: NetworkClient, nodeId: number) => Promise<ShareStateResult<T>>,
  ): Promise<ShareStateResult<T>> {
    try {
      await this.options.ensureTopic()
    } catch (err) {
      return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: (err as Error).message, data: null }
    }
    const leader = this.options.leaderOf(this.options.coordinator.partitionFor(key))
    if (leader === undefined || leader < 0) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null, data: null }
    if (leader === this.options.brokerId) return local(this.options.coordinator)
    let client = this.clients.get(leader)
    if (client === undefined) {
      const endpoint = this.options.endpoint(leader)
      if (endpoint === undefined) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: `broker ${leader} is not alive`, data: null }
      client = NetworkClient.connect(`${endpoint.host}:${endpoint.port}`, { clientId: `broker-${this.options.brokerId}-share-persister`, security: this.options.security?.() })
      this.clients.set(leader, client)
    }
    try {
      const c = await client
      return await remote(c, c.bootstrapNodes[0]!.nodeId)
    } catch (err) {
      // Connected afresh next time (the coordinator may have moved or restarted).
      this.clients.delete(leader)
      void client.then((c) => c.close()).catch(() => {})
      this.options.logger.warn('share coordinator request failed', { broker: leader, error: (err as Error).message })
      return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: (err as Error).message, data: null }
    }
  }
}
