/**
 * CreateTopics: per-topic results with Kafka's error codes; a replication factor (-1:
 * default.replication.factor) or explicit replica assignments, which the broker checks against
 * the live brokers (a standalone broker: itself alone, replication factor 1). From v5
 * a created (or validated) topic is answered with its configs, as Kafka does: Kafka's
 * AdminClient reads them and fails on a null list.
 *
 * A request whose topics ask for more than MAX_PARTITIONS_PER_REQUEST partitions together is
 * refused whole, every topic POLICY_VIOLATION, before anything is made: Kafka's controller
 * (validateTotalNumberOfPartitions) does the same. The broker's max.broker.partitions bounds
 * each topic after that. Topics are created one after another, each all or nothing.
 */
import { ZERO_UUID } from '../../protocol/apis/common.js'
import type { CreateTopicsRequest, CreateTopicsResponse, CreatableTopicResult } from '../../protocol/apis/create-topics.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { EXCESSIVE_PARTITIONS, MAX_PARTITIONS_PER_REQUEST } from '../config.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { topicConfigEntries } from './describe-configs.js'

export function createTopicsHandler(broker: BrokerContext): ApiHandler<CreateTopicsRequest, CreateTopicsResponse> {
  return async (request, context) => {
    // Kafka's: CREATE on the cluster or the topic; a topic's configs are answered only with DESCRIBE_CONFIGS on it.
    const names = request.topics.map((t) => t.name)
    const creatable = broker.auth.authorizeCluster(context, AclOperation.CREATE) ? new Set(names) : broker.auth.filterByAuthorized(context, AclOperation.CREATE, ResourceType.TOPIC, names)
    const configsDescribable = broker.auth.filterByAuthorized(context, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names)
    let requested = 0
    for (const t of request.topics) requested += t.assignments.length > 0 ? t.assignments.length : t.numPartitions === -1 ? broker.config.numPartitions : Math.max(t.numPartitions, 0)
    if (requested > MAX_PARTITIONS_PER_REQUEST) {
      const refused = request.topics.map((t) => ({ ...emptyResult(t.name), errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_PARTITIONS }))
      return { throttleTimeMs: 0, topics: refused }
    }
    const results: CreatableTopicResult[] = []
    const seen = new Set<string>()
    for (const t of request.topics) {
      const result = emptyResult(t.name)
      results.push(result)
      try {
        if (seen.has(t.name)) throw new TopicError(ErrorCode.INVALID_REQUEST, `topic ${t.name} appears twice in the request`)
        seen.add(t.name)
        if (!configsDescribable.has(t.name)) result.topicConfigErrorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        if (!creatable.has(t.name)) throw new TopicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.')
        if (t.assignments.length > 0 && (t.numPartitions !== -1 || t.replicationFactor !== -1)) {
          throw new TopicError(ErrorCode.INVALID_REQUEST, 'both numPartitions or replicationFactor and replicasAssignments were set; only one of the two may be set')
        }
        const assignments = [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex)
        if (assignments.some((a, i) => a.partitionIndex !== i)) throw new TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'the assignments must name partitions 0 to n-1, each once')
        const partitions = assignments.length > 0 ? assignments.length : t.numPartitions === -1 ? broker.config.numPartitions : t.numPartitions
        const replicationFactor = assignments.length > 0 ? assignments[0]!.brokerIds.length : t.replicationFactor === -1 ? broker.config.defaultReplicationFactor : t.replicationFactor
        const configs: Record<string, string> = {}
        for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value
        const topic = await broker.createTopic(t.name, partitions, configs, request.validateOnly, { replicationFactor, assignments: assignments.map((a) => a.brokerIds) })
        result.numPartitions = partitions
        result.replicationFactor = replicationFactor
        if (topic) result.topicId = topic.topicId
        if (configsDescribable.has(t.name))
          result.configs = topicConfigEntries(broker, configs, false).map((c) => ({
            name: c.name,
            value: c.value,
            readOnly: c.readOnly,
            configSource: c.configSource,
            isSensitive: c.isSensitive,
          }))
      } catch (err) {
        if (!(err instanceof TopicError)) throw err
        result.errorCode = err.errorCode
        result.errorMessage = err.message
      }
    }
    return { throttleTimeMs: 0, topics: results }
  }
}

function emptyResult(name: string): CreatableTopicResult {
  return {
    name,
    topicId: ZERO_UUID,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    topicConfigErrorCode: ErrorCode.NONE,
    numPartitions: -1,
    replicationFactor: -1,
    configs: null,
  }
}
