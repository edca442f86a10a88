/**
 * Kafka's ShareConsumeRequestManager: ShareFetch and ShareAcknowledge to the leaders of the
 * partitions a share consumer is assigned, one share session per leader
 * (share-session-handler.ts).
 *
 * - Fetch: to each leader with no request in flight and no records of its left in the buffer
 *   (share-completed-fetch.ts), as Java: records are acquired (locked for this member) when
 *   fetched, so no more are fetched than the application is about to read. The acknowledgements
 *   pending for that leader ride along (not in the request that opens a session: Kafka refuses
 *   that; they then wait for the next).
 * - Acknowledge (commitSync/commitAsync): a ShareAcknowledge to each leader with acknowledgements
 *   pending, after the request in flight to it; close: a ShareAcknowledge with epoch -1 that
 *   carries the last ones and closes the session (the broker releases whatever else the member
 *   holds there).
 * - Results: per partition, the acknowledge error (ShareFetch's acknowledgeErrorCode,
 *   ShareAcknowledge's errorCode; a top-level error or a failed request fails all of the
 *   request's) with the offsets; the consumer hands them to its AcknowledgementCommitCallback.
 * - Fetch errors: a partition's NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION and the like
 *   refresh the metadata before the next fetch; a session error resets the session.
 */
import { shareAcknowledgeCodec } from '../protocol/apis/share-acknowledge.js'
import { shareFetchCodec, type ShareFetchResponse } from '../protocol/apis/share-fetch.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { Acknowledgements } from './acknowledgements.js'
import { KafkaClientError } from './errors.js'
import type { RecordIndexer } from './fetched-records.js'
import type { NetworkClient } from './network-client.js'
import { ShareCompletedFetch, type ShareFetchBuffer } from './share-completed-fetch.js'
import type { ShareConsumerConfig } from './share-consumer-config.js'
import type { ShareMembershipManager } from './share-membership-manager.js'
import { FINAL_EPOCH, ShareSessionHandler, tipKey, type PartitionAcknowledgements, type TopicIdPartition } from './share-session-handler.js'

/** The outcome of one partition's acknowledgements (Java's callback arguments). */
export interface AcknowledgementResult {
  tp: TopicIdPartition
  offsets: bigint[]
  error: KafkaClientError | null
}

const SESSION_ERRORS = new Set<number>([ErrorCode.SHARE_SESSION_NOT_FOUND, ErrorCode.INVALID_SHARE_SESSION_EPOCH, ErrorCode.SHARE_SESSION_LIMIT_REACHED])

interface NodeState {
  session: ShareSessionHandler
  /** The request in flight to the node (fetch or acknowledge); the next one waits for it. */
  inFlight: Promise<void> | null
  /** Acknowledgements not yet sent, by partition. */
  pending: Map<string, PartitionAcknowledgements>
}

export class ShareConsumeRequestManager {
  private readonly nodes = new Map<number, NodeState>()
  /** Acknowledgement outcomes not yet handed to the application. */
  readonly completed: AcknowledgementResult[] = []
  private metadataStale = false
  /** The lock duration the last ShareFetch answered (acquisitionLockTimeoutMs). */
  acquisitionLockTimeoutMs = -1

  constructor(
    private readonly client: NetworkClient,
    private readonly membership: ShareMembershipManager,
    private readonly buffer: ShareFetchBuffer,
    private readonly config: ShareConsumerConfig,
    private readonly indexer: RecordIndexer | null,
  ) {}

  private node(nodeId: number): NodeState {
    let s = this.nodes.get(nodeId)
    if (!s) this.nodes.set(nodeId, (s = { session: new ShareSessionHandler(nodeId), inFlight: null, pending: new Map() }))
    return s
  }

  /** Queues an acknowledgement of `offset` for the leader it was fetched from. */
  acknowledge(nodeId: number, tp: TopicIdPartition, offset: bigint, type: 'accept' | 'release' | 'reject' | 'renew' | 'gap'): void {
    const pending = this.node(nodeId).pending
    const key = tipKey(tp)
    let p = pending.get(key)
    if (!p) pending.set(key, (p = { tp, acks: new Acknowledgements() }))
    if (type === 'gap') p.acks.addGap(offset)
    else p.acks.add(offset, type)
  }

  get hasPendingAcknowledgements(): boolean {
    for (const s of this.nodes.values()) if (s.pending.size > 0) return true
    return false
  }

  /** The assigned partitions by leader, after a metadata refresh when names or leaders are missing. */
  private async partitionsByLeader(): Promise<Map<number, TopicIdPartition[]>> {
    const metadata = this.client.metadata
    const resolve = () => {
      const out = new Map<number, TopicIdPartition[]>()
      let missing = false
      for (const [topicId, partitions] of this.membership.assignment) {
        const topic = metadata.topicById(Buffer.from(topicId, 'hex'))
        for (const partition of partitions) {
          const leader = topic ? (metadata.partition(topic.name, partition)?.leaderId ?? -1) : -1
          if (!topic || leader < 0) {
            missing = true
            continue
          }
          if (!out.has(leader)) out.set(leader, [])
          out.get(leader)!.push({ topicId, topic: topic.name, partition })
        }
      }
      return { out, missing }
    }
    let r = resolve()
    if ((r.missing || this.metadataStale) && this.membership.subscription.length > 0) {
      this.metadataStale = false
      await this.client.refreshMetadata(this.membership.subscription).catch(() => undefined)
      r = resolve()
    }
    return r.out
  }

  /** Sends a ShareFetch to each leader that has none in flight and nothing left in the buffer. */
  async sendFetches(): Promise<void> {
    if (!this.membership.isInGroup || this.membership.memberEpoch <= 0) return
    const byLeader = await this.partitionsByLeader()
    // Leaders no longer leading anything of ours: their sessions end with the acknowledgements still due there.
    for (const [nodeId, state] of this.nodes) if (!byLeader.has(nodeId) && state.session.isOpen && !state.inFlight && state.pending.size > 0) void this.acknowledgeNode(nodeId, state, false)
    for (const [nodeId, wanted] of byLeader) {
      const state = this.node(nodeId)
      if (state.inFlight || this.buffer.hasDataFor(nodeId)) continue
      state.inFlight = this.fetch(nodeId, state, wanted).finally(() => {
        state.inFlight = null
      })
    }
  }

  private async fetch(nodeId: number, state: NodeState, wanted: TopicIdPartition[]): Promise<void> {
    const session = state.session
    const acks = session.isOpen ? [...state.pending.values()] : []
    if (session.isOpen) state.pending.clear()
    const { topics, forgottenTopicsData } = session.fetchTopics(wanted, acks)
    const c = this.config
    let res: ShareFetchResponse
    try {
      res = await this.client.request(nodeId, shareFetchCodec, {
        groupId: this.membership.groupId,
        memberId: this.membership.memberId,
        shareSessionEpoch: session.epoch,
        maxWaitMs: c.fetchMaxWaitMs,
        minBytes: c.fetchMinBytes,
        maxBytes: c.fetchMaxBytes,
        maxRecords: c.maxPollRecords,
        batchSize: c.maxPollRecords,
        shareAcquireMode: c.shareAcquireMode === 'record_limit' ? 1 : 0,
        isRenewAck: acks.some((a) => a.acks.hasRenew),
        topics,
        forgottenTopicsData,
      })
    } catch (err) {
      session.reset()
      this.metadataStale = true
      this.failAll(acks, asClientError(err, 'ShareFetch'))
      this.buffer.wakeup()
      return
    }
    if (res.errorCode !== ErrorCode.NONE) {
      if (SESSION_ERRORS.has(res.errorCode)) session.reset()
      else this.metadataStale = true
      this.failAll(acks, KafkaClientError.fromErrorCode(res.errorCode, 'ShareFetch', res.errorMessage))
      // An error that nothing mends by itself (authorization, an unknown member): the poll sees the next heartbeat's verdict.
      this.buffer.wakeup()
      return
    }
    session.onFetchAnswered(wanted)
    if (res.acquisitionLockTimeoutMs > 0) this.acquisitionLockTimeoutMs = res.acquisitionLockTimeoutMs
    const ackedKeys = new Map(acks.map((a) => [tipKey(a.tp), a]))
    for (const t of res.responses) {
      const topicId = t.topicId.toString('hex')
      for (const p of t.partitions) {
        const key = tipKey({ topicId, partition: p.partitionIndex })
        const sent = ackedKeys.get(key)
        if (sent) {
          ackedKeys.delete(key)
          this.completed.push({
            tp: sent.tp,
            offsets: sent.acks.offsets(),
            error:
              p.acknowledgeErrorCode === ErrorCode.NONE ? null : KafkaClientError.fromErrorCode(p.acknowledgeErrorCode, `acknowledge ${sent.tp.topic}-${sent.tp.partition}`, p.acknowledgeErrorMessage),
          })
        }
        if (p.errorCode !== ErrorCode.NONE) {
          this.metadataStale = true
          continue
        }
        if (p.acquiredRecords.length === 0) continue
        const tp = wanted.find((w) => w.topicId === topicId && w.partition === p.partitionIndex) ?? {
          topicId,
          topic: this.client.metadata.topicById(t.topicId)?.name ?? topicId,
          partition: p.partitionIndex,
        }
        this.buffer.add(new ShareCompletedFetch(tp, nodeId, p.records, p.acquiredRecords, this.indexer, c.maxDecompressedBytes))
      }
    }
    // Acknowledged partitions the answer does not list: no error was reported for them.
    for (const a of ackedKeys.values()) this.completed.push({ tp: a.tp, offsets: a.acks.offsets(), error: null })
    this.buffer.wakeup()
  }

  private failAll(acks: readonly PartitionAcknowledgements[], error: KafkaClientError): void {
    for (const a of acks) this.completed.push({ tp: a.tp, offsets: a.acks.offsets(), error })
  }

  /** A ShareAcknowledge of what is pending at `nodeId` (epoch -1 with `close`), after the request in flight. */
  private async acknowledgeNode(nodeId: number, state: NodeState, close: boolean): Promise<void> {
    while (state.inFlight) await state.inFlight
    const session = state.session
    const acks = [...state.pending.values()]
    state.pending.clear()
    if (!session.isOpen) {
      // No session to acknowledge in: the records go back to the group when their locks end.
      this.failAll(acks, new KafkaClientError('SHARE_SESSION_NOT_FOUND', `no share session with node ${nodeId} to acknowledge in`))
      return
    }
    if (acks.length === 0 && !close) return
    const run = async () => {
      try {
        const res = await this.client.request(nodeId, shareAcknowledgeCodec, {
          groupId: this.membership.groupId,
          memberId: this.membership.memberId,
          shareSessionEpoch: close ? FINAL_EPOCH : session.epoch,
          isRenewAck: acks.some((a) => a.acks.hasRenew),
          topics: ShareSessionHandler.acknowledgeTopics(acks),
        })
        if (res.errorCode !== ErrorCode.NONE) {
          if (SESSION_ERRORS.has(res.errorCode) || close) session.reset()
          this.failAll(acks, KafkaClientError.fromErrorCode(res.errorCode, 'ShareAcknowledge', res.errorMessage))
          return
        }
        if (close) session.reset()
        else session.onAcknowledgeAnswered()
        const byKey = new Map(acks.map((a) => [tipKey(a.tp), a]))
        for (const t of res.responses)
          for (const p of t.partitions) {
            const a = byKey.get(tipKey({ topicId: t.topicId.toString('hex'), partition: p.partitionIndex }))
            if (!a) continue
            byKey.delete(tipKey(a.tp))
            this.completed.push({
              tp: a.tp,
              offsets: a.acks.offsets(),
              error: p.errorCode === ErrorCode.NONE ? null : KafkaClientError.fromErrorCode(p.errorCode, `acknowledge ${a.tp.topic}-${a.tp.partition}`, p.errorMessage),
            })
          }
        for (const a of byKey.values()) this.completed.push({ tp: a.tp, offsets: a.acks.offsets(), error: null })
      } catch (err) {
        session.reset()
        this.failAll(acks, asClientError(err, 'ShareAcknowledge'))
      }
    }
    state.inFlight = run().finally(() => {
      state.inFlight = null
    })
    await state.inFlight
  }

  /** Sends every pending acknowledgement (commitSync/commitAsync); resolves when all are answered. */
  async commit(): Promise<void> {
    await Promise.all([...this.nodes].filter(([, s]) => s.pending.size > 0).map(([nodeId, s]) => this.acknowledgeNode(nodeId, s, false)))
  }

  /** Closes every share session, with the pending acknowledgements. */
  async close(): Promise<void> {
    await Promise.all([...this.nodes].map(([nodeId, s]) => (s.session.isOpen || s.inFlight ? this.acknowledgeNode(nodeId, s, true) : Promise.resolve())))
  }
}

function asClientError(err: unknown, what: string): KafkaClientError {
  return err instanceof KafkaClientError ? err : new KafkaClientError('UNKNOWN_SERVER_ERROR', `${what} failed: ${(err as Error).message}`, { cause: err })
}
