/**
 * ShareGroupDescribe (KIP-932): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), then the
 * group's state, epochs, assignor (`simple`) and members with their assignments, topics named by
 * id and name. A group whose members hold topics the principal may not DESCRIBE is answered
 * TOPIC_AUTHORIZATION_FAILED without members. An id that is not a share group is
 * GROUP_ID_NOT_FOUND ("Group X is not a share group." when another kind of group has it), as
 * Kafka 4.4; while this broker does not coordinate the groups, each is answered the
 * coordinator's error.
 */
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../protocol/apis/describe-groups.js'
import type { ShareGroupDescribeRequest, ShareGroupDescribeResponse, ShareGroupDescribedGroup } from '../../protocol/apis/share-group-describe.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { SIMPLE_ASSIGNOR_NAME } from '../../group/share/simple-assignor.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function shareGroupDescribeHandler(broker: BrokerContext): ApiHandler<ShareGroupDescribeRequest, ShareGroupDescribeResponse> {
  return (request, context) => {
    const empty = (groupId: string, errorCode: number, errorMessage: string | null = null): ShareGroupDescribedGroup => ({
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
      groups: request.groupIds.map((groupId): ShareGroupDescribedGroup => {
        if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return empty(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        const status = broker.groupCoordinator.statusError(groupId)
        if (status !== ErrorCode.NONE) return empty(groupId, status)
        const group = broker.groupCoordinator.shareGroup(groupId)
        if (!group) {
          const other = broker.groupCoordinator.consumerGroup(groupId) !== undefined || broker.groupCoordinator.describeGroup(groupId) !== null
          return empty(groupId, ErrorCode.GROUP_ID_NOT_FOUND, other ? `Group ${groupId} is not a share group.` : `Group ${groupId} not found.`)
        }
        const denied = new Set<string>()
        const members = [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          assignment: {
            topicPartitions: [...m.assignedPartitions].flatMap(([topicId, partitions]) => {
              const topic = broker.topics.getById(Buffer.from(topicId, 'hex'))
              if (!topic) return []
              if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) denied.add(topic.name)
              return [{ topicId: topic.topicId, topicName: topic.name, partitions: [...partitions].sort((x, y) => x - y) }]
            }),
          },
        }))
        if (denied.size > 0) return empty(groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The group has described topic(s) that the client is not authorized to describe.')
        return {
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          groupId,
          groupState: group.state(),
          groupEpoch: group.groupEpoch,
          assignmentEpoch: group.assignmentEpoch,
          assignorName: SIMPLE_ASSIGNOR_NAME,
          members,
          authorizedOperations: request.includeAuthorizedOperations ? broker.auth.authorizedOperations(context, ResourceType.GROUP, groupId) : AUTHORIZED_OPERATIONS_OMITTED,
        }
      }),
    }
  }
}
