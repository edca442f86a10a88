/**
 * ListGroups: every group, filtered by state (v4+) and type (v5+: `classic`, or `consumer` for KIP-848 groups, `share` for KIP-932 ones).
 * The groups of the `__consumer_offsets` partitions this broker leads (a client lists them on every
 * broker, as Kafka's AdminClient does); none led, none listed (NONE, as Kafka's broker that owns
 * no offsets partition); while one of them loads, COORDINATOR_LOAD_IN_PROGRESS.
 */
import type { ListGroupsRequest, ListGroupsResponse } from '../../protocol/apis/list-groups.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function listGroupsHandler(broker: BrokerContext): ApiHandler<ListGroupsRequest, ListGroupsResponse> {
  return (request, context) => {
    const v = context.header.apiVersion
    // Kafka's: every group with DESCRIBE on the cluster, else those the principal may DESCRIBE.
    const allGroups = broker.auth.authorizeCluster(context, AclOperation.DESCRIBE)
    const describable = (groupId: string) => allGroups || broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)
    const states = new Set(request.statesFilter.map((s) => s.toLowerCase()))
    const types = new Set(request.typesFilter.map((s) => s.toLowerCase()))
    const groups = broker.groupCoordinator
      .listGroups()
      .map((g) => ({ ...g, type: broker.groupCoordinator.consumerGroup(g.groupId) ? 'consumer' : broker.groupCoordinator.shareGroup(g.groupId) ? 'share' : 'classic' }))
      .filter((g) => describable(g.groupId) && (states.size === 0 || states.has(g.state.toLowerCase())) && (types.size === 0 || types.has(g.type)))
      .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: v >= 4 ? g.state : '', groupType: v >= 5 ? g.type : '' }))
    const loading = broker.groupCoordinator.loadInProgress()
    return { throttleTimeMs: 0, errorCode: loading ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE, groups }
  }
}
