/**
 * DescribeGroups: state, protocol and members (metadata and assignment only when Stable, as
 * Kafka does). An unknown group is Dead with no members before v6 and GROUP_ID_NOT_FOUND from v6;
 * so is a consumer group (KIP-848) or a share group (KIP-932), which Kafka 4.4 describes only with ConsumerGroupDescribe
 * ("Group X is not a classic group.": its GroupMetadataManager.describeGroups reads classic groups
 * only; Admin.describeConsumerGroups and kafka-consumer-groups.sh use ConsumerGroupDescribe).
 * While this broker does not coordinate the groups, or loads them, every group is Dead with that
 * error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS), as Kafka answers.
 */
import { AUTHORIZED_OPERATIONS_OMITTED, type DescribeGroupsRequest, type DescribeGroupsResponse, type DescribedGroup } from '../../protocol/apis/describe-groups.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function describeGroupsHandler(broker: BrokerContext): ApiHandler<DescribeGroupsRequest, DescribeGroupsResponse> {
  return (request, context) => {
    const v = context.header.apiVersion
    return {
      throttleTimeMs: 0,
      groups: request.groups.map((groupId): DescribedGroup => {
        const base = { errorMessage: null, groupId, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }
        // Kafka's: DESCRIBE on the group; KIP-430 operations when asked.
        if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId))
          return { ...base, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, groupState: '', protocolType: '', protocolData: '', members: [] }
        if (request.includeAuthorizedOperations) base.authorizedOperations = broker.auth.authorizedOperations(context, ResourceType.GROUP, groupId)
        const status = broker.groupCoordinator.statusError(groupId)
        if (status !== ErrorCode.NONE) return { ...base, errorCode: status, groupState: 'Dead', protocolType: '', protocolData: '', members: [] }
        const d = broker.groupCoordinator.describeGroup(groupId)
        if (!d) {
          const notFound = v >= 6
          return {
            ...base,
            errorCode: notFound ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NONE,
            errorMessage: notFound
              ? broker.groupCoordinator.consumerGroup(groupId) || broker.groupCoordinator.shareGroup(groupId)
                ? `Group ${groupId} is not a classic group.`
                : `Group ${groupId} not found.`
              : null,
            groupState: 'Dead',
            protocolType: '',
            protocolData: '',
            members: [],
          }
        }
        return {
          ...base,
          errorCode: ErrorCode.NONE,
          groupState: d.state,
          protocolType: d.protocolType,
          protocolData: d.protocolName,
          members: d.members.map((m) => ({
            memberId: m.memberId,
            groupInstanceId: v >= 4 ? m.groupInstanceId : null,
            clientId: m.clientId,
            clientHost: m.clientHost,
            memberMetadata: m.metadata,
            memberAssignment: m.assignment,
          })),
        }
      }),
    }
  }
}
