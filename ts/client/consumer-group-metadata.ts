/**
 * Kafka's ConsumerGroupMetadata: who a consumer is in its group, as `Consumer.groupMetadata()`
 * gives it and `Producer.sendOffsetsToTransaction` takes it, so that the group coordinator fences
 * a transactional commit of a member that is no longer the group's (KIP-447). The generation is
 * the classic protocol's generation id or the consumer protocol's member epoch; -1 and '' while
 * the consumer is not in the group.
 */
export interface ConsumerGroupMetadata {
  groupId: string
  generationId?: number
  memberId?: string
  groupInstanceId?: string | null
}
