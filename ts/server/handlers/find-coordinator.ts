/**
 * FindCoordinator (Kafka's `KafkaApis.getCoordinator`): a group's coordinator is the leader of
 * the `__consumer_offsets` partition that holds its commits, and a transactional id's the leader
 * of the `__transaction_state` partition that holds its state, each partition Kafka's
 * `partitionFor` of the key over the topic's partition count (ts/coordinator/partition-for.ts),
 * as the metadata cache has it: a standalone broker is the coordinator of every group and
 * transaction; in a cluster, the topic is created on the first key of its type asked
 * (offsets.topic.num.partitions or transaction.state.log.num.partitions partitions of
 * offsets.topic.replication.factor or transaction.state.log.replication.factor replicas, once
 * that many brokers live), and while the key's partition has no live leader the answer is
 * COORDINATOR_NOT_AVAILABLE (retriable). The leader is named even while it still loads the
 * partition: the group and transaction requests answer COORDINATOR_LOAD_IN_PROGRESS then, as
 * Kafka's. Up to v3 one key, answered at the top level; v4+ a batch of keys, one coordinator
 * each. A share key (v6+, KIP-932: "groupId:topicId:partition", a share partition's state) is
 * the leader of the `__share_group_state` partition that holds it, created when first asked
 * (the share coordinator's own requests; CLUSTER_ACTION on the cluster, as Kafka checks). Other
 * key types, and empty or malformed keys, are INVALID_REQUEST.
 */
import { CoordinatorType, type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../../protocol/apis/find-coordinator.js'
import { TRANSACTION_STATE_TOPIC } from '../../coordinator/transaction/transaction-log.js'
import { SHARE_GROUP_STATE_TOPIC } from '../../coordinator/share/share-group-state-topic.js'
import { partitionFor as coordinatorPartitionFor } from '../../coordinator/partition-for.js'
import { OFFSETS_TOPIC } from '../../group/offsets-topic.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { endPointFor } from '../../replica/partition-registration.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

/** A share key: "groupId:topicId:partition" (Kafka's `SharePartitionKey.validate`: a group id, a 22-character topic id, a partition number). */
const SHARE_KEY = /^.+:[A-Za-z0-9_-]{22}:\d+$/

export function findCoordinatorHandler(broker: BrokerContext): ApiHandler<FindCoordinatorRequest, FindCoordinatorResponse> {
  return async (request, context) => {
    const { header, connection } = context
    // In a cluster, the first group's FindCoordinator creates the offsets topic (Kafka's
    // getOrCreateInternalTopic); until it has a leader, COORDINATOR_NOT_AVAILABLE (retriable).
    const transactional = request.keyType === CoordinatorType.TRANSACTION
    const share = request.keyType === CoordinatorType.SHARE && header.apiVersion >= 6
    const shareAuthorized = share && broker.auth.authorizeCluster(context, AclOperation.CLUSTER_ACTION)
    let unavailable: string | null = null
    if (request.keyType === CoordinatorType.GROUP || transactional || shareAuthorized) {
      try {
        await (transactional ? broker.ensureTransactionStateTopic() : share ? broker.ensureShareGroupStateTopic() : broker.ensureOffsetsTopic())
      } catch (err) {
        if (!(err instanceof TopicError)) throw err
        unavailable = err.message
      }
    }
    const topic = transactional ? TRANSACTION_STATE_TOPIC : share ? SHARE_GROUP_STATE_TOPIC : OFFSETS_TOPIC
    const partitionFor = (key: string) =>
      transactional
        ? broker.transactionCoordinator.stateManager.partitionFor(key)
        : share
          ? coordinatorPartitionFor(key, broker.shareGroupStateTopic?.partitions ?? broker.config.shareCoordinatorStateTopicNumPartitions)
          : broker.groupCoordinator.partitionFor(key)
    const find = (key: string): Coordinator => {
      const known = request.keyType === CoordinatorType.GROUP || transactional || share
      if (!known || key === '' || (share && !SHARE_KEY.test(key))) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: null }
      if (share && !shareAuthorized) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null }
      // Kafka's: DESCRIBE on the group or the transactional id.
      if (!share && !broker.auth.authorize(context, AclOperation.DESCRIBE, transactional ? ResourceType.TRANSACTIONAL_ID : ResourceType.GROUP, key)) {
        const errorCode = transactional ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : ErrorCode.GROUP_AUTHORIZATION_FAILED
        return { key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: null }
      }
      if (unavailable !== null) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: unavailable }
      const partition = partitionFor(key)
      const leader = broker.metadataCache.partitionRegistration(topic, partition)?.leader
      const node = broker.metadataCache.aliveBrokers().find((b) => b.id === leader)
      // The coordinator as the client's listener reaches it; without that listener, as unavailable (Kafka's answer too).
      const endpoint = node && endPointFor(node, connection.listenerName)
      if (!node || !endpoint) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: `the leader of ${topic}-${partition} is not available` }
      return { key, nodeId: node.id, host: endpoint.host, port: endpoint.port, errorCode: ErrorCode.NONE, errorMessage: null }
    }
    if (header.apiVersion >= 4) {
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: '', nodeId: 0, host: '', port: 0, coordinators: request.coordinatorKeys.map(find) }
    }
    const c = find(request.key)
    return { throttleTimeMs: 0, errorCode: c.errorCode, errorMessage: c.errorMessage, nodeId: c.nodeId, host: c.host, port: c.port, coordinators: [] }
  }
}
