/**
 * ConsumerGroupDescribe (KIP-848): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), then
 * the group's state, epochs, assignor and members with their current and target assignments,
 * topics named by id and name. A group whose members hold topics the principal may not DESCRIBE
 * is answered TOPIC_AUTHORIZATION_FAILED without members, as Kafka. An id that is not a consumer
 * group is GROUP_ID_NOT_FOUND (a classic or share group too: "not a consumer group"); while this broker
 * does not coordinate the groups, each is answered the coordinator's error.
 * With the cluster's group.version below 1 every group is answered UNSUPPORTED_VERSION, as Kafka.
 * The checks and answers it shares with ShareGroupDescribe are in ./group-describe.ts.
 */
import type { ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse } from '../../protocol/apis/consumer-group-describe.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { supportsConsumerGroups } from '../broker-features.js'
import { describeGroups, errorDescribedGroup } from './group-describe.js'

/** KIP-1099's member types: a member using the classic protocol, one using the consumer protocol. */
const CLASSIC_MEMBER_TYPE = 0
const CONSUMER_MEMBER_TYPE = 1

export function consumerGroupDescribeHandler(broker: BrokerContext): ApiHandler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> {
  return (request, context) => {
    if (!supportsConsumerGroups(broker.finalizedFeatures)) return { throttleTimeMs: 0, groups: request.groupIds.map((groupId) => errorDescribedGroup(groupId, ErrorCode.UNSUPPORTED_VERSION)) }
    return describeGroups(broker, context, request, {
      name: 'consumer',
      lookup: (groupId) => broker.groupCoordinator.consumerGroup(groupId),
      describe: (group, describeAssignment) => ({
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          instanceId: m.instanceId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          subscribedTopicRegex: m.subscribedTopicRegex,
          assignment: describeAssignment(m.assignedPartitions),
          targetAssignment: describeAssignment(group.targetAssignmentOf(m.memberId)),
          memberType: m.classicMemberMetadata === null ? CONSUMER_MEMBER_TYPE : CLASSIC_MEMBER_TYPE,
        })),
        assignorName: broker.groupCoordinator.consumerGroupAssignorName(group),
      }),
    })
  }
}
