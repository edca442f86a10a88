/**
 * The group coordinator's offset operations (Kafka's `OffsetMetadataManager`, with the group
 * checks of `handleCommitOffsets`, `handleDeleteGroups` and `handleDeleteOffsets`): OffsetCommit
 * checks the member and generation and writes through ./offset-store.ts; DeleteGroups removes
 * only Empty groups; OffsetDelete refuses the topics a live consumer group subscribes to. Both
 * delete offsets with tombstones in the offsets log.
 *
 * Commits, DeleteGroups and OffsetDelete are answered once their records are on the ISR of the
 * offsets partition (acks=all, ./offset-store.ts); a failed write is answered with Kafka's
 * mapping of its error (./coordinator-errors.ts) and changes nothing.
 */
import type { Logger } from '../logger.js'
import { CONSUMER_PROTOCOL_TYPE } from '../protocol/consumer-protocol.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { coordinatorErrorOf } from '../coordinator/coordinator-errors.js'
import { GroupMetadata, GroupState } from './group-metadata.js'
import type { GroupMetadataManager } from './group-metadata-manager.js'
import { groupMetadataTombstone } from './group-metadata-records.js'
import type { OffsetStore } from './offset-store.js'
import type { OffsetCommitEntry } from './offsets-topic.js'

export class OffsetMetadataManager {
  private readonly groupManager: GroupMetadataManager
  /** The group manager's groups, by id. */
  private readonly groups: Map<string, GroupMetadata>
  private readonly offsets: OffsetStore
  /** The coordinator's status error (./coordinator-runtime.ts): NONE while it serves. */
  private readonly statusError: () => number
  private readonly logger: Logger

  constructor(groupManager: GroupMetadataManager, offsets: OffsetStore, statusError: () => number, logger: Logger) {
    this.groupManager = groupManager
    this.groups = groupManager.groups
    this.offsets = offsets
    this.statusError = statusError
    this.logger = logger
  }

  /**
   * Kafka's `handleCommitOffsets` checks: members of a managed group commit in their current
   * generation; generation -1 is a "simple" commit, allowed only while the group is Empty (or
   * unknown: the group is then created, Empty, to hold the offsets). Then the commits are
   * written (Kafka's `storeOffsets`) and applied once the ISR holds them. Resolves to the error
   * code for every partition of the request.
   */
  async commitOffsets(groupId: string, memberId: string, generationId: number, entries: readonly OffsetCommitEntry[], groupInstanceId: string | null = null): Promise<number> {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return status
    let group = this.groups.get(groupId)
    if (!group) {
      if (generationId >= 0) return ErrorCode.ILLEGAL_GENERATION
      group = new GroupMetadata(groupId)
      this.groups.set(groupId, group)
    }
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if (group.isStaticMemberFenced(groupInstanceId, memberId)) return ErrorCode.FENCED_INSTANCE_ID
    if (!(generationId < 0 && group.is(GroupState.Empty))) {
      const member = group.get(memberId)
      if (!member) return ErrorCode.UNKNOWN_MEMBER_ID
      if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION
      if (group.is(GroupState.CompletingRebalance)) return ErrorCode.REBALANCE_IN_PROGRESS
      this.groupManager.keepAlive(member)
    }
    const g = group
    // A group deleted or unloaded meanwhile does not take the offsets (Kafka's putCacheCallback).
    const appendError = await this.offsets.commit(groupId, entries, { onlyIf: () => !g.is(GroupState.Dead) })
    if (appendError === ErrorCode.NONE) return ErrorCode.NONE
    this.logger.warn('offset commit not written', { group: groupId, appendError })
    // A group made for these offsets alone goes again.
    if (this.groups.get(groupId) === g) this.groupManager.maybeForget(g)
    return coordinatorErrorOf(appendError, 'commit')
  }

  /**
   * A commit of a consumer group member, checked by the caller (./consumer/consumer-group.ts):
   * written, and applied once the ISR holds it unless `stillLive()` says the group went meanwhile.
   */
  async commitConsumerGroupOffsets(groupId: string, entries: readonly OffsetCommitEntry[], stillLive: () => boolean): Promise<number> {
    const appendError = await this.offsets.commit(groupId, entries, { onlyIf: stillLive })
    if (appendError === ErrorCode.NONE) return ErrorCode.NONE
    this.logger.warn('offset commit not written', { group: groupId, appendError })
    return coordinatorErrorOf(appendError, 'commit')
  }

  /**
   * Kafka's `handleTxnCommitOffsets` / `doTxnCommitOffsets` (TxnOffsetCommit): an unknown group
   * is created Empty to hold the offsets; a member id, when given (v3+, KIP-447), must be the
   * group's, and a generation, when given, its current one. The commits are written as the
   * producer's transactional batch and wait for the transaction's end (./offset-store.ts).
   */
  async commitTransactionalOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    generationId: number,
    groupInstanceId: string | null,
    entries: readonly OffsetCommitEntry[],
    consumerGroup = false,
  ): Promise<number> {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return status
    if (consumerGroup) {
      // Checked by the caller against the consumer group (./group-coordinator.ts).
      const appendError = await this.offsets.commitTransactional(groupId, producerId, producerEpoch, entries)
      if (appendError === ErrorCode.NONE || appendError === ErrorCode.INVALID_PRODUCER_EPOCH) return appendError
      return coordinatorErrorOf(appendError, 'commit')
    }
    let group = this.groups.get(groupId)
    if (!group) {
      group = new GroupMetadata(groupId)
      this.groups.set(groupId, group)
    }
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if (group.isStaticMemberFenced(groupInstanceId, memberId)) return ErrorCode.FENCED_INSTANCE_ID
    if (memberId !== '' && !group.get(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID
    if (generationId >= 0 && generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION
    const g = group
    const appendError = await this.offsets.commitTransactional(groupId, producerId, producerEpoch, entries)
    if (appendError === ErrorCode.NONE) return ErrorCode.NONE
    this.logger.warn('transactional offset commit not written', { group: groupId, producerId, appendError })
    if (this.groups.get(groupId) === g) this.groupManager.maybeForget(g)
    // A fenced producer's epoch, as the offsets partition's producer state refused it.
    if (appendError === ErrorCode.INVALID_PRODUCER_EPOCH) return appendError
    return coordinatorErrorOf(appendError, 'commit')
  }

  // ---- DeleteGroups, OffsetDelete ----

  /**
   * Kafka's `deleteGroups`: only an Empty group can go (NON_EMPTY_GROUP while it has members,
   * GROUP_ID_NOT_FOUND when there is none by that id); it is gone at once (Dead: commits on
   * their way to the ISR no longer apply), and its committed offsets, those on their way too,
   * are deleted with tombstones in the offsets log, so it stays gone after a restart. Each id is
   * answered once, when its tombstones (its offsets', then its GroupMetadata's) are on the ISR;
   * if they could not be written, the group is back (Empty, known by its offsets or its record)
   * and the answer is Kafka's mapping of the error.
   */
  deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; errorCode: number }>> {
    return Promise.all([...new Set(groupIds)].map(async (groupId) => ({ groupId, errorCode: await this.deleteGroup(groupId) })))
  }

  private async deleteGroup(groupId: string): Promise<number> {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return status
    const group = this.groups.get(groupId)
    if (!group || group.is(GroupState.Dead)) return ErrorCode.GROUP_ID_NOT_FOUND
    if (!group.is(GroupState.Empty)) return ErrorCode.NON_EMPTY_GROUP
    // Members given an id with MEMBER_ID_REQUIRED find no group when they come back.
    group.transitionTo(GroupState.Dead)
    this.groups.delete(groupId)
    // Kafka's batch: the offsets' tombstones, then the group's (./group-metadata-records.ts).
    const { errorCode: appendError } = await this.offsets.deleteGroup(groupId, [groupMetadataTombstone(groupId)])
    if (appendError !== ErrorCode.NONE) {
      this.logger.warn('offset tombstones of a deleted group not written', { group: groupId, appendError })
      if (this.statusError() === ErrorCode.NONE && !this.groups.has(groupId) && (this.offsets.hasOffsets(groupId) || group.persisted)) this.groups.set(groupId, emptyAgain(group))
      return coordinatorErrorOf(appendError, 'tombstones')
    }
    this.logger.info('deleted group', { group: groupId })
    return ErrorCode.NONE
  }

  /**
   * The offsets of a consumer group deleted by the caller: tombstones for all of them, answered
   * once the ISR holds them (Kafka's mapping of the error if not).
   */
  async deleteOffsetsOf(groupId: string): Promise<number> {
    const { errorCode: appendError } = await this.offsets.deleteGroup(groupId)
    if (appendError === ErrorCode.NONE) {
      this.logger.info('deleted group', { group: groupId })
      return ErrorCode.NONE
    }
    this.logger.warn('offset tombstones of a deleted group not written', { group: groupId, appendError })
    return coordinatorErrorOf(appendError, 'tombstones')
  }

  /** OffsetDelete for a consumer group: GROUP_SUBSCRIBED_TO_TOPIC for the topics its members subscribe to, tombstones for the rest. */
  async deleteConsumerGroupOffsets(
    groupId: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
    isSubscribedToTopic: (topic: string) => boolean,
  ): Promise<{ errorCode: number; partitions: Array<{ topic: string; partition: number; errorCode: number }> }> {
    const out = partitions.map((p) => ({ ...p, errorCode: isSubscribedToTopic(p.topic) ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE }))
    const { errorCode: appendError } = await this.offsets.delete(
      groupId,
      out.filter((p) => p.errorCode === ErrorCode.NONE),
    )
    if (appendError !== ErrorCode.NONE) {
      this.logger.warn('offset tombstones not written', { group: groupId, appendError })
      return { errorCode: coordinatorErrorOf(appendError, 'tombstones'), partitions: [] }
    }
    return { errorCode: ErrorCode.NONE, partitions: out }
  }

  /**
   * Kafka's `deleteOffsets` (OffsetDelete): a group-level error when the group is unknown
   * (GROUP_ID_NOT_FOUND) or has members and is not a consumer group (NON_EMPTY_GROUP); else,
   * per partition, GROUP_SUBSCRIBED_TO_TOPIC for a topic the group consumes, and the others'
   * offsets are deleted with tombstones (a partition without one is answered NONE too), answered
   * once the ISR holds them. A group left Empty with no offsets is gone, as after a restart.
   */
  async deleteOffsets(
    groupId: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<{ errorCode: number; partitions: Array<{ topic: string; partition: number; errorCode: number }> }> {
    if (groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, partitions: [] }
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, partitions: [] }
    const group = this.groups.get(groupId)
    if (!group || group.is(GroupState.Dead)) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: [] }
    if (!group.is(GroupState.Empty) && group.protocolType !== CONSUMER_PROTOCOL_TYPE) return { errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: [] }
    const out = partitions.map((p) => ({ ...p, errorCode: group.isSubscribedToTopic(p.topic) ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE }))
    const { errorCode: appendError } = await this.offsets.delete(
      groupId,
      out.filter((p) => p.errorCode === ErrorCode.NONE),
    )
    if (appendError !== ErrorCode.NONE) {
      this.logger.warn('offset tombstones not written', { group: groupId, appendError })
      return { errorCode: coordinatorErrorOf(appendError, 'tombstones'), partitions: [] }
    }
    if (this.groups.get(groupId) === group) this.groupManager.maybeForget(group)
    return { errorCode: ErrorCode.NONE, partitions: out }
  }
}

/** A group whose deletion failed, Empty again as it was (its generation, its record in the log). */
function emptyAgain(dead: GroupMetadata): GroupMetadata {
  const group = new GroupMetadata(dead.groupId)
  group.restore({ generationId: dead.generationId, protocolType: dead.protocolType, protocolName: null, leaderId: null, currentStateTimestamp: dead.currentStateTimestamp }, [])
  group.persisted = dead.persisted
  return group
}
