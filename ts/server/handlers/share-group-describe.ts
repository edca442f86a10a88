/**
 * ShareGroupDescribe (KIP-932): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), then the
 * group's state, epochs, assignor (`simple`) and members with their assignments, topics named by
 * id and name. A group whose members hold topics the principal may not DESCRIBE is answered
 * TOPIC_AUTHORIZATION_FAILED without members. An id that is not a share group is
 * GROUP_ID_NOT_FOUND ("Group X is not a share group." when another kind of group has it), as
 * Kafka 4.4; while this broker does not coordinate the groups, each is answered the
 * coordinator's error.
 * The checks and answers it shares with ConsumerGroupDescribe are in ./group-describe.ts.
 */
import type { ShareGroupDescribeRequest, ShareGroupDescribeResponse, ShareGroupDescribedGroup } from '../../protocol/apis/share-group-describe.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { SIMPLE_ASSIGNOR_NAME } from '../../group/share/simple-assignor.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { assignmentDescriber, authorizedGroupOperations, errorDescribedGroup, groupToDescribe, UNAUTHORIZED_TOPICS_MESSAGE } from './group-describe.js'

export function shareGroupDescribeHandler(broker: BrokerContext): ApiHandler<ShareGroupDescribeRequest, ShareGroupDescribeResponse> {
  return (request, context) => ({
    throttleTimeMs: 0,
    groups: request.groupIds.map((groupId): ShareGroupDescribedGroup => {
      const found = groupToDescribe(broker, context, groupId, 'share', (id) => broker.groupCoordinator.shareGroup(id))
      if ('error' in found) return found.error
      const { group } = found
      const { describe, denied } = assignmentDescriber(broker, context)
      const members = [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribedTopicNames],
        assignment: describe(m.assignedPartitions),
      }))
      if (denied.size > 0) return errorDescribedGroup(groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, UNAUTHORIZED_TOPICS_MESSAGE)
      return {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        groupId,
        groupState: group.state(),
        groupEpoch: group.groupEpoch,
        assignmentEpoch: group.assignmentEpoch,
        assignorName: SIMPLE_ASSIGNOR_NAME,
        members,
        authorizedOperations: authorizedGroupOperations(broker, context, groupId, request.includeAuthorizedOperations),
      }
    }),
  })
}
