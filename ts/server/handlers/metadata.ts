/**
 * Metadata: this broker as the only one, the leader of every partition, with topic ids.
 * Unknown topics are created when auto.create.topics.enable and the request allows it, as
 * Kafka does (answering LEADER_NOT_AVAILABLE the first time is what Kafka does while the
 * controller works; here creation is synchronous, so the topic is returned ready).
 * `__consumer_offsets` is listed too, with is_internal (clients filter internal topics
 * themselves), asked for by name, by id or among all topics.
 *
 * v10 and v11 carry topic ids in requests but do not support them: a topic without a name or
 * with a non-zero id makes every topic of the request INVALID_REQUEST (a null name answered as
 * ""), as Kafka's handleTopicMetadataRequest does; v12+ looks nameless topics up by id.
 */
import { ZERO_UUID } from '../../protocol/apis/common.js'
import type { MetadataRequest, MetadataResponse, MetadataResponseTopic } from '../../protocol/apis/metadata.js'
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../protocol/apis/metadata.js'
import { OFFSETS_TOPIC } from '../../group/offset-store.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { PARTITION_LEADER_EPOCH } from '../../replica/leader-epoch.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { TopicInfo } from '../topic-store.js'
import type { ApiHandler } from '../kafka-apis.js'

/** Every partition is led at epoch 0 by this broker until replication exists (one constant, shared with Fetch). */
export const LEADER_EPOCH = PARTITION_LEADER_EPOCH

export function metadataHandler(broker: BrokerContext): ApiHandler<MetadataRequest, MetadataResponse> {
  const describe = (topic: TopicInfo): MetadataResponseTopic => ({
    errorCode: ErrorCode.NONE,
    name: topic.name,
    topicId: topic.topicId,
    isInternal: topic.name === OFFSETS_TOPIC,
    partitions: Array.from({ length: topic.partitions }, (_, p) => ({
      errorCode: ErrorCode.NONE,
      partitionIndex: p,
      leaderId: broker.config.nodeId,
      leaderEpoch: LEADER_EPOCH,
      replicaNodes: [broker.config.nodeId],
      isrNodes: [broker.config.nodeId],
      offlineReplicas: [],
    })),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  })
  const missing = (name: string | null, topicId: Buffer, errorCode: number): MetadataResponseTopic => ({
    errorCode,
    name,
    topicId,
    isInternal: false,
    partitions: [],
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  })

  return async (request, { header }) => {
    const topics: MetadataResponseTopic[] = []
    const idsUnsupported =
      header.apiVersion < 12 && request.topics !== null && request.topics.some((t) => t.name === null || !t.topicId.equals(ZERO_UUID))
    if (idsUnsupported) {
      for (const wanted of request.topics!) topics.push(missing(wanted.name ?? '', wanted.topicId, ErrorCode.INVALID_REQUEST))
    } else if (request.topics === null) {
      for (const topic of broker.topics.all()) topics.push(describe(topic))
      topics.push(describe(broker.offsetsTopic))
    } else {
      for (const wanted of request.topics) {
        if (wanted.name === null) {
          const byId = broker.visibleTopicById(wanted.topicId)
          topics.push(byId ? describe(byId) : missing(null, wanted.topicId, ErrorCode.UNKNOWN_TOPIC_ID))
          continue
        }
        let topic = broker.visibleTopic(wanted.name)
        if (!topic && request.allowAutoTopicCreation && broker.config.autoCreateTopics) {
          try {
            topic = (await broker.createTopic(wanted.name, broker.config.numPartitions, {})) ?? undefined
          } catch (err) {
            if (!(err instanceof TopicError)) throw err
            // Raced with another creation, or an illegal name.
            topic = broker.topics.get(wanted.name)
            if (!topic) {
              topics.push(missing(wanted.name, ZERO_UUID, err.errorCode))
              continue
            }
          }
        }
        topics.push(topic ? describe(topic) : missing(wanted.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
      }
    }
    return {
      throttleTimeMs: 0,
      brokers: [{ nodeId: broker.config.nodeId, host: broker.config.advertisedHost, port: broker.advertisedPort, rack: null }],
      clusterId: broker.config.clusterId,
      controllerId: broker.config.nodeId,
      topics,
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    }
  }
}
