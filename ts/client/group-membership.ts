/**
 * What the Consumer asks of its group membership, whichever protocol speaks it (Kafka's
 * group.protocol): `classic` (consumer-coordinator.ts: JoinGroup/SyncGroup/Heartbeat, the
 * assignment computed by the group's leader) or `consumer` (KIP-848, request-managers.ts:
 * ConsumerGroupHeartbeat, the assignment computed by the coordinator and reconciled by the member).
 *
 * The rebalance callbacks (`RebalanceListener`) run inside `poll()`, never in between, as Kafka's
 * (its callbacks run on the application thread, in poll).
 */
import type { TopicPartition } from './fetch-session-handler.js'
import type { ConsumerGroupMetadata } from './consumer-group-metadata.js'

export interface RebalanceListener {
  /** Before the partitions are given up (commit their positions here). */
  onRevoke(partitions: TopicPartition[]): Promise<void>
  /** The partitions were lost with the generation: others may own them already (no commit). */
  onLost(partitions: TopicPartition[]): Promise<void>
  /** After the group handed these out. */
  onAssign(partitions: TopicPartition[]): Promise<void>
  /** A rebalance or a new assignment is waiting: the consumer should poll soon. */
  onRejoinNeeded(): void
}

export interface OffsetAndMetadata {
  offset: bigint
  metadata?: string | null
}

export interface GroupMembership {
  readonly groupId: string
  /**
   * A rebalance is waiting for the next poll (a rejoin, or a new assignment to reconcile): the
   * batches not handed to the application yet are read again after it.
   */
  readonly needsRejoin: boolean
  /** The member is out of the group now (left, dropped, fenced): its partitions are lost, not revoked. */
  readonly generationLost: boolean
  /** Who the member is now: its member id and generation (member epoch), for transactional commits. */
  groupMetadata(): ConsumerGroupMetadata
  /** The subscription changed: the group hears of it at the next poll. */
  requestRejoin(): void
  /** The application polled: joins or reconciles when needed (callbacks run here); throws a fatal error. */
  poll(deadline: number): Promise<void>
  /** Leaves the group (unsubscribe); the partitions were given up by the caller. */
  maybeLeaveGroup(reason: string): Promise<void>
  fetchCommittedOffsets(partitions: TopicPartition[], deadline: number): Promise<Map<string, bigint>>
  /** OffsetCommit; `beforeRevocation`: the commit of partitions about to be revoked (retried as Kafka's). */
  commitOffsets(offsets: Map<string, TopicPartition & OffsetAndMetadata>, deadline: number, beforeRevocation?: boolean): Promise<void>
  /** Gives the partitions up, leaves the group, stops heartbeating. */
  close(): Promise<void>
}
