/**
 * What ConsumerGroupDescribe (KIP-848, ./consumer-group-describe.ts) and ShareGroupDescribe
 * (KIP-932, ./share-group-describe.ts) answer alike, as Kafka's KafkaApis and
 * GroupMetadataManager do for both:
 *
 * - DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED;
 * - the coordinator's status for the group (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...);
 * - a group of the kind asked for, else GROUP_ID_NOT_FOUND: "Group X is not a <kind> group."
 *   when a group of another kind has the id, "Group X not found." when none does;
 * - the members' assignments by topic id and name (partitions sorted), noting the topics the
 *   principal may not DESCRIBE: any such topic turns the group's answer into
 *   TOPIC_AUTHORIZATION_FAILED without members;
 * - a group answered with an error is empty (Kafka's `getErrorDescribedGroup`).
 */
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../protocol/apis/describe-groups.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Assignment } from '../../group/consumer/assignment.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import type { BrokerContext } from './broker-context.js'
import type { RequestContext } from '../kafka-apis.js'

/** The fields both DescribedGroup structs have, members aside. */
export interface DescribedGroupHeader {
  errorCode: number
  errorMessage: string | null
  groupId: string
  groupState: string
  groupEpoch: number
  assignmentEpoch: number
  assignorName: string
  authorizedOperations: number
}

/** A member's assignment as both responses carry it. */
export interface DescribedAssignment {
  topicPartitions: Array<{ topicId: Buffer; topicName: string; partitions: number[] }>
}

/** Kafka's `getErrorDescribedGroup`: the group answered `errorCode`, empty. */
export function errorDescribedGroup(groupId: string, errorCode: number, errorMessage: string | null = null): DescribedGroupHeader & { members: never[] } {
  return {
    errorCode,
    errorMessage,
    groupId,
    groupState: '',
    groupEpoch: 0,
    assignmentEpoch: 0,
    assignorName: '',
    members: [],
    authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  }
}

/** Kafka's message for a group whose members hold topics the principal may not DESCRIBE. */
const UNAUTHORIZED_TOPICS_MESSAGE = 'The group has described topic(s) that the client is not authorized to describe.'

/**
 * The group `groupId` of the kind asked for (`kind`, `lookup`) when the request may describe it
 * and this coordinator serves it; otherwise the group's error answer.
 */
function groupToDescribe<G>(
  broker: BrokerContext,
  context: RequestContext,
  groupId: string,
  kind: 'consumer' | 'share',
  lookup: (groupId: string) => G | undefined,
): { group: G } | { error: DescribedGroupHeader & { members: never[] } } {
  if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return { error: errorDescribedGroup(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED) }
  const status = broker.groupCoordinator.statusError(groupId)
  if (status !== ErrorCode.NONE) return { error: errorDescribedGroup(groupId, status) }
  const group = lookup(groupId)
  if (group !== undefined) return { group }
  const coordinator = broker.groupCoordinator
  const another = coordinator.describeGroup(groupId) !== null || coordinator.consumerGroup(groupId) !== undefined || coordinator.shareGroup(groupId) !== undefined
  return { error: errorDescribedGroup(groupId, ErrorCode.GROUP_ID_NOT_FOUND, another ? `Group ${groupId} is not a ${kind} group.` : `Group ${groupId} not found.`) }
}

/** What a group of either kind answers with besides the common fields: its members and assignor. */
export interface GroupDescription<M> {
  members: M[]
  assignorName: string
}

/** How a describe API finds and describes a group of its kind. */
export interface GroupKind<G, M> {
  /** "consumer" or "share", for "Group X is not a <kind> group.". */
  name: 'consumer' | 'share'
  /** The group of this kind by that id. */
  lookup(groupId: string): G | undefined
  /** Its members and assignor; `describeAssignment` turns an assignment into the response's topics. */
  describe(group: G, describeAssignment: (a: Assignment) => DescribedAssignment): GroupDescription<M>
}

/**
 * The answer for each of `groupIds`: the groups of `kind`, each described by it with
 * `describeAssignment`, which leaves out unknown topic ids and notes the topics the request may
 * not DESCRIBE.
 */
export function describeGroups<G extends { state(): string; groupEpoch: number; assignmentEpoch: number }, M>(
  broker: BrokerContext,
  context: RequestContext,
  request: { groupIds: readonly string[]; includeAuthorizedOperations: boolean },
  kind: GroupKind<G, M>,
): { throttleTimeMs: number; groups: Array<DescribedGroupHeader & { members: M[] }> } {
  const groups = request.groupIds.map((groupId) => {
    const found = groupToDescribe(broker, context, groupId, kind.name, (id) => kind.lookup(id))
    if ('error' in found) return found.error
    const { group } = found
    const denied = new Set<string>()
    const { members, assignorName } = kind.describe(group, (a) => ({
      topicPartitions: [...a].flatMap(([topicId, partitions]) => {
        const topic = broker.topics.getById(Buffer.from(topicId, 'hex'))
        if (!topic) return []
        if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) denied.add(topic.name)
        return [{ topicId: topic.topicId, topicName: topic.name, partitions: [...partitions].sort((x, y) => x - y) }]
      }),
    }))
    if (denied.size > 0) return errorDescribedGroup(groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, UNAUTHORIZED_TOPICS_MESSAGE)
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupId,
      groupState: group.state(),
      groupEpoch: group.groupEpoch,
      assignmentEpoch: group.assignmentEpoch,
      assignorName,
      members,
      authorizedOperations: request.includeAuthorizedOperations ? broker.auth.authorizedOperations(context, ResourceType.GROUP, groupId) : AUTHORIZED_OPERATIONS_OMITTED,
    }
  })
  return { throttleTimeMs: 0, groups }
}
