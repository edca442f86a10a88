/**
 * FindCoordinator: a group's coordinator is the leader of the `__consumer_offsets` partition
 * that holds its commits (one partition here: offset-store.ts), as the metadata cache has it: a
 * standalone broker is the coordinator of every group; in a cluster, the topic is created on the
 * first group key asked (offsets.topic.replication.factor replicas, once that many brokers live),
 * and while that partition has no live leader the answer is COORDINATOR_NOT_AVAILABLE (retriable). Up to v3 one key, answered at the top
 * level; v4+ a batch of keys, one coordinator each. Other key types are INVALID_REQUEST.
 *
 * Transactions have no coordinator here: a transactional id (key type 1) is answered
 * UNSUPPORTED_VERSION with a message saying so (as Redpanda answers with transactions
 * disabled). COORDINATOR_NOT_AVAILABLE would be untrue and retriable: clients would retry it
 * forever. UNSUPPORTED_VERSION is not retriable, so kafkajs and the Java producer fail at once.
 */
import { CoordinatorType, type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../../protocol/apis/find-coordinator.js'
import { OFFSETS_PARTITION, OFFSETS_TOPIC } from '../../group/offsets-topic.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export const TRANSACTIONS_UNSUPPORTED = 'this broker (ferrolog) has no transaction coordinator: transactions are not supported, so a transactional.id cannot be used (idempotent producers work)'

export function findCoordinatorHandler(broker: BrokerContext): ApiHandler<FindCoordinatorRequest, FindCoordinatorResponse> {
  return async (request, { header }) => {
    // In a cluster, the first group's FindCoordinator creates the offsets topic (Kafka's
    // getOrCreateInternalTopic); until it has a leader, COORDINATOR_NOT_AVAILABLE (retriable).
    let unavailable: string | null = null
    if (request.keyType === CoordinatorType.GROUP) {
      try {
        await broker.ensureOffsetsTopic()
      } catch (err) {
        if (!(err instanceof TopicError)) throw err
        unavailable = err.message
      }
    }
    const find = (key: string): Coordinator => {
      if (request.keyType === CoordinatorType.TRANSACTION) {
        return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: TRANSACTIONS_UNSUPPORTED }
      }
      const errorCode =
        request.keyType === CoordinatorType.GROUP
          ? key === ''
            ? ErrorCode.INVALID_REQUEST
            : ErrorCode.NONE
          : ErrorCode.INVALID_REQUEST
      if (errorCode !== ErrorCode.NONE) return { key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: null }
      if (unavailable !== null) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: unavailable }
      const leader = broker.metadataCache.partitionRegistration(OFFSETS_TOPIC, OFFSETS_PARTITION)?.leader
      const node = broker.metadataCache.aliveBrokers().find((b) => b.id === leader)
      if (!node) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: `the leader of ${OFFSETS_TOPIC}-${OFFSETS_PARTITION} is not available` }
      return { key, nodeId: node.id, host: node.host, port: node.port, errorCode, errorMessage: null }
    }
    if (header.apiVersion >= 4) {
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: '', nodeId: 0, host: '', port: 0, coordinators: request.coordinatorKeys.map(find) }
    }
    const c = find(request.key)
    return { throttleTimeMs: 0, errorCode: c.errorCode, errorMessage: c.errorMessage, nodeId: c.nodeId, host: c.host, port: c.port, coordinators: [] }
  }
}
