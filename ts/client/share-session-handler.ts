/**
 * Kafka's ShareSessionHandler: the client's half of one share session (KIP-932) with one broker,
 * the leader of some of the partitions a share consumer reads.
 *
 * - Epoch: 0 opens the session (such a request may carry no acknowledgement: Kafka answers
 *   INVALID_REQUEST); each answered request moves it on by one (2^31-1 wraps to 1); -1 closes
 *   it, which makes the broker release every record the member still holds there.
 * - Partitions: each ShareFetch names the partitions wanted now and those that carry
 *   acknowledgements; those in the session but no longer wanted go in forgottenTopicsData.
 * - SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED, or a
 *   request that got no answer: the session is gone; the next request opens a new one (epoch 0).
 *
 * One request at a time per session: the caller (share-consume-request-manager.ts) serializes
 * ShareFetch and ShareAcknowledge to a node, as each takes the epoch the previous one left.
 */
import type { ShareAcknowledgeRequest } from '../protocol/apis/share-acknowledge.js'
import type { ShareFetchRequest } from '../protocol/apis/share-fetch.js'
import type { Acknowledgements } from './acknowledgements.js'

export const INITIAL_EPOCH = 0
export const FINAL_EPOCH = -1

/** A partition by topic id (Kafka's TopicIdPartition), with its name for the application. */
export interface TopicIdPartition {
  /** The topic id, hex. */
  topicId: string
  topic: string
  partition: number
}

export const tipKey = (tp: { topicId: string; partition: number }): string => `${tp.topicId}:${tp.partition}`

export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH
  return epoch === 0x7fffffff ? 1 : epoch + 1
}

export interface PartitionAcknowledgements {
  tp: TopicIdPartition
  acks: Acknowledgements
}

type FetchTopics = ShareFetchRequest['topics']
type AcknowledgeTopics = ShareAcknowledgeRequest['topics']

export class ShareSessionHandler {
  epoch = INITIAL_EPOCH
  private readonly inSession = new Map<string, TopicIdPartition>()

  constructor(readonly nodeId: number) {}

  get isOpen(): boolean {
    return this.epoch > INITIAL_EPOCH
  }

  /** The topics and forgotten partitions of the next ShareFetch: `wanted` and the partitions of `acks`. */
  fetchTopics(wanted: readonly TopicIdPartition[], acks: readonly PartitionAcknowledgements[]): { topics: FetchTopics; forgottenTopicsData: ShareFetchRequest['forgottenTopicsData'] } {
    const byTopic = new Map<string, FetchTopics[number]>()
    const entry = (tp: TopicIdPartition) => {
      let t = byTopic.get(tp.topicId)
      if (!t) byTopic.set(tp.topicId, (t = { topicId: Buffer.from(tp.topicId, 'hex'), partitions: [] }))
      let p = t.partitions.find((x) => x.partitionIndex === tp.partition)
      if (!p) t.partitions.push((p = { partitionIndex: tp.partition, partitionMaxBytes: 0, acknowledgementBatches: [] }))
      return p
    }
    for (const tp of wanted) entry(tp)
    for (const a of acks) entry(a.tp).acknowledgementBatches = a.acks.toBatches()
    const wantedKeys = new Set(wanted.map(tipKey))
    const forgotten = new Map<string, number[]>()
    for (const [key, tp] of this.inSession) {
      if (wantedKeys.has(key)) continue
      if (!forgotten.has(tp.topicId)) forgotten.set(tp.topicId, [])
      forgotten.get(tp.topicId)!.push(tp.partition)
    }
    return { topics: [...byTopic.values()], forgottenTopicsData: [...forgotten].map(([id, partitions]) => ({ topicId: Buffer.from(id, 'hex'), partitions })) }
  }

  static acknowledgeTopics(acks: readonly PartitionAcknowledgements[]): AcknowledgeTopics {
    const byTopic = new Map<string, AcknowledgeTopics[number]>()
    for (const { tp, acks: a } of acks) {
      let t = byTopic.get(tp.topicId)
      if (!t) byTopic.set(tp.topicId, (t = { topicId: Buffer.from(tp.topicId, 'hex'), partitions: [] }))
      t.partitions.push({ partitionIndex: tp.partition, acknowledgementBatches: a.toBatches() })
    }
    return [...byTopic.values()]
  }

  /** A ShareFetch was answered without a session error: `wanted` is the session's now. */
  onFetchAnswered(wanted: readonly TopicIdPartition[]): void {
    this.inSession.clear()
    for (const tp of wanted) this.inSession.set(tipKey(tp), tp)
    this.epoch = nextEpoch(this.epoch)
  }

  /** A ShareAcknowledge was answered without a session error. */
  onAcknowledgeAnswered(): void {
    this.epoch = nextEpoch(this.epoch)
  }

  /** The session is gone (a session error, no answer, or closed). */
  reset(): void {
    this.epoch = INITIAL_EPOCH
    this.inSession.clear()
  }
}
