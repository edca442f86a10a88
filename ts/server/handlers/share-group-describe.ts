/**
 * ShareGroupDescribe (KIP-932): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), then the
 * group's state, epochs, assignor (`simple`) and members with their assignments, topics named by
 * id and name. A group whose members hold topics the principal may not DESCRIBE is answered
 * TOPIC_AUTHORIZATION_FAILED without members. An id that is not a share group is
 * GROUP_ID_NOT_FOUND ("Group X is not a share group." when another kind of group has it), as
 * Kafka 4.4; while this broker does not coordinate the groups, each is answered the
 * coordinator's error.
 * With the cluster's share.version below 1 every group is answered UNSUPPORTED_VERSION, as Kafka.
 * The checks and answers it shares with ConsumerGroupDescribe are in ./group-describe.ts.
 */
import type { ShareGroupDescribeRequest, ShareGroupDescribeResponse } from '../../protocol/apis/share-group-describe.js'
import { SIMPLE_ASSIGNOR_NAME } from '../../group/share/simple-assignor.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { supportsShareGroups } from '../broker-features.js'
import { describeGroups, errorDescribedGroup } from './group-describe.js'

export function shareGroupDescribeHandler(broker: BrokerContext): ApiHandler<ShareGroupDescribeRequest, ShareGroupDescribeResponse> {
  return (request, context) => {
    if (!supportsShareGroups(broker.finalizedFeatures)) return { throttleTimeMs: 0, groups: request.groupIds.map((groupId) => errorDescribedGroup(groupId, ErrorCode.UNSUPPORTED_VERSION)) }
    return describeGroups(broker, context, request, {
      name: 'share',
      lookup: (groupId) => broker.groupCoordinator.shareGroup(groupId),
      describe: (group, describeAssignment) => ({
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          assignment: describeAssignment(m.assignedPartitions),
        })),
        assignorName: SIMPLE_ASSIGNOR_NAME,
      }),
    })
  }
}
