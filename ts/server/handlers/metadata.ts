/**
 * Metadata: the live brokers, the controller, and each partition's leader, leader epoch,
 * replicas and ISR as the metadata cache has them (a standalone broker: itself, leading every
 * partition alone); replicas not alive are listed offline, and a partition without a leader
 * answers LEADER_NOT_AVAILABLE. Topics carry their ids.
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
import { isInternalTopic } from '../internal-topics.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { endPointFor, NO_LEADER } from '../../replica/partition-registration.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { TopicInfo } from '../topic-store.js'
import type { ApiHandler } from '../kafka-apis.js'

export function metadataHandler(broker: BrokerContext): ApiHandler<MetadataRequest, MetadataResponse> {
  // `alive`: the live brokers; `reachable`: those with an endpoint on the client's listener.
  const describeTopic = (topic: TopicInfo, alive: ReadonlySet<number>, reachable: ReadonlySet<number>): MetadataResponseTopic => ({
    errorCode: ErrorCode.NONE,
    name: topic.name,
    topicId: topic.topicId,
    isInternal: isInternalTopic(topic.name),
    partitions: Array.from({ length: topic.partitions }, (_, p) => {
      const r = broker.metadataCache.partitionRegistration(topic.name, p)
      if (!r) {
        return { errorCode: ErrorCode.LEADER_NOT_AVAILABLE, partitionIndex: p, leaderId: NO_LEADER, leaderEpoch: -1, replicaNodes: [], isrNodes: [], offlineReplicas: [] }
      }
      // A leader alive but without the client's listener: LISTENER_NOT_FOUND, as Kafka answers.
      const listenerMissing = r.leader !== NO_LEADER && alive.has(r.leader) && !reachable.has(r.leader)
      return {
        errorCode: r.leader === NO_LEADER ? ErrorCode.LEADER_NOT_AVAILABLE : listenerMissing ? ErrorCode.LISTENER_NOT_FOUND : ErrorCode.NONE,
        partitionIndex: p,
        leaderId: r.leader,
        leaderEpoch: r.leaderEpoch,
        replicaNodes: [...r.replicas],
        isrNodes: [...r.isr],
        offlineReplicas: r.replicas.filter((id) => !alive.has(id)),
      }
    }),
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

  return async (request, { header, connection }) => {
    const topics: MetadataResponseTopic[] = []
    const aliveBrokers = broker.metadataCache.aliveBrokers()
    const alive = new Set(aliveBrokers.map((b) => b.id))
    // The brokers as the client's listener reaches them (Kafka's getAliveBrokerNodes(listenerName)).
    const brokers = aliveBrokers.flatMap((b) => {
      const endpoint = endPointFor(b, connection.listenerName)
      return endpoint ? [{ nodeId: b.id, host: endpoint.host, port: endpoint.port, rack: b.rack }] : []
    })
    const reachable = new Set(brokers.map((b) => b.nodeId))
    const describe = (topic: TopicInfo, aliveIds: ReadonlySet<number>) => describeTopic(topic, aliveIds, reachable)
    const idsUnsupported = header.apiVersion < 12 && request.topics !== null && request.topics.some((t) => t.name === null || !t.topicId.equals(ZERO_UUID))
    if (idsUnsupported) {
      for (const wanted of request.topics!) topics.push(missing(wanted.name ?? '', wanted.topicId, ErrorCode.INVALID_REQUEST))
    } else if (request.topics === null) {
      for (const topic of broker.topics.all()) topics.push(describe(topic, alive))
      if (broker.offsetsTopic) topics.push(describe(broker.offsetsTopic, alive))
      if (broker.transactionStateTopic) topics.push(describe(broker.transactionStateTopic, alive))
    } else {
      for (const wanted of request.topics) {
        if (wanted.name === null) {
          const byId = broker.visibleTopicById(wanted.topicId)
          topics.push(byId ? describe(byId, alive) : missing(null, wanted.topicId, ErrorCode.UNKNOWN_TOPIC_ID))
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
        topics.push(topic ? describe(topic, alive) : missing(wanted.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
      }
    }
    return {
      throttleTimeMs: 0,
      brokers,
      clusterId: broker.config.clusterId,
      controllerId: broker.metadataCache.controllerId(),
      topics,
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    }
  }
}
