/**
 * ConsumerGroupDescribe (KIP-848): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), then
 * the group's state, epochs, assignor and members with their current and target assignments,
 * topics named by id and name. A group whose members hold topics the principal may not DESCRIBE
 * is answered TOPIC_AUTHORIZATION_FAILED without members, as Kafka. An id that is not a consumer
 * group is GROUP_ID_NOT_FOUND (a classic or share group too: "not a consumer group"); while this broker
 * does not coordinate the groups, each is answered the coordinator's error.
 */
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../protocol/apis/describe-groups.js'
import type { ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupDescribedGroup } from '../../protocol/apis/consumer-group-describe.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Assignment } from '../../group/consumer/assignment.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

/** KIP-848 member type: a member using the consumer protocol. */
const CONSUMER_MEMBER_TYPE = 1

export function consumerGroupDescribeHandler(broker: BrokerContext): ApiHandler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> {
  return (request, context) => {
    const empty = (groupId: string, errorCode: number, errorMessage: string | null = null): ConsumerGroupDescribedGroup => ({
      errorCode,
      errorMessage,
      groupId,
      groupState: '',
      groupEpoch: 0,
      assignmentEpoch: 0,
      assignorName: '',
      members: [],
      authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    })
    return {
      throttleTimeMs: 0,
      groups: request.groupIds.map((groupId): ConsumerGroupDescribedGroup => {
        if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return empty(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        const status = broker.groupCoordinator.statusError(groupId)
        if (status !== ErrorCode.NONE) return empty(groupId, status)
        const group = broker.groupCoordinator.consumerGroup(groupId)
        if (!group) {
          const classic = broker.groupCoordinator.describeGroup(groupId) !== null || broker.groupCoordinator.shareGroup(groupId) !== undefined
          return empty(groupId, ErrorCode.GROUP_ID_NOT_FOUND, classic ? `Group ${groupId} is not a consumer group.` : `Group ${groupId} not found.`)
        }
        const denied = new Set<string>()
        const described = (a: Assignment) => ({
          topicPartitions: [...a].flatMap(([topicId, partitions]) => {
            const topic = broker.topics.getById(Buffer.from(topicId, 'hex'))
            if (!topic) return []
            if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) denied.add(topic.name)
            return [{ topicId: topic.topicId, topicName: topic.name, partitions: [...partitions].sort((x, y) => x - y) }]
          }),
        })
        const members = [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          instanceId: m.instanceId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          subscribedTopicRegex: m.subscribedTopicRegex,
          assignment: described(m.assignedPartitions),
          targetAssignment: described(group.targetAssignmentOf(m.memberId)),
          memberType: CONSUMER_MEMBER_TYPE,
        }))
        if (denied.size > 0) return empty(groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The group has described topic(s) that the client is not authorized to describe.')
        return {
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          groupId,
          groupState: group.state(),
          groupEpoch: group.groupEpoch,
          assignmentEpoch: group.assignmentEpoch,
          assignorName: broker.groupCoordinator.consumerGroupAssignorName(group),
          members,
          authorizedOperations: request.includeAuthorizedOperations ? broker.auth.authorizedOperations(context, ResourceType.GROUP, groupId) : AUTHORIZED_OPERATIONS_OMITTED,
        }
      }),
    }
  }
}
