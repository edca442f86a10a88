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
 *
 * Authorization (Kafka's): all topics lists only those the principal may DESCRIBE; a topic asked
 * for without DESCRIBE is TOPIC_AUTHORIZATION_FAILED (by id: the id without the name), as is an
 * unknown one it would auto-create without CREATE on the cluster or the topic.
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
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/authorizer/acl.js'

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

  return async (request, context) => {
    const { header, connection } = context
    const topics: MetadataResponseTopic[] = []
    const { auth } = broker
    const mayDescribe = (name: string) => auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, name)
    const mayCreate = (name: string) => auth.authorizeCluster(context, AclOperation.CREATE) || auth.authorize(context, AclOperation.CREATE, ResourceType.TOPIC, name)
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
      // All topics: those the principal may not describe are left out.
      for (const topic of broker.topics.all()) if (mayDescribe(topic.name)) topics.push(describe(topic, alive))
      if (broker.offsetsTopic && mayDescribe(broker.offsetsTopic.name)) topics.push(describe(broker.offsetsTopic, alive))
      if (broker.transactionStateTopic && mayDescribe(broker.transactionStateTopic.name)) topics.push(describe(broker.transactionStateTopic, alive))
      if (broker.shareGroupStateTopic && mayDescribe(broker.shareGroupStateTopic.name)) topics.push(describe(broker.shareGroupStateTopic, alive))
    } else {
      for (const wanted of request.topics) {
        // By id when one is given (Kafka's KafkaApis: the name is then ignored; the Java consumer
        // leaves it at its default '').
        if (wanted.name === null || !wanted.topicId.equals(ZERO_UUID)) {
          const byId = broker.visibleTopicById(wanted.topicId)
          // A topic id is not secret: an unauthorized one is answered by id, without its name.
          if (byId && !mayDescribe(byId.name)) topics.push(missing(null, wanted.topicId, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
          else topics.push(byId ? describe(byId, alive) : missing(null, wanted.topicId, ErrorCode.UNKNOWN_TOPIC_ID))
          continue
        }
        // Before telling whether it exists.
        if (!mayDescribe(wanted.name)) {
          topics.push(missing(wanted.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
          continue
        }
        let topic = broker.visibleTopic(wanted.name)
        if (!topic && request.allowAutoTopicCreation && broker.config.autoCreateTopics && !mayCreate(wanted.name)) {
          topics.push(missing(wanted.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
          continue
        }
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
    // KIP-430: what the principal may do, when asked.
    if (request.includeTopicAuthorizedOperations)
      for (const t of topics) if (t.errorCode !== ErrorCode.TOPIC_AUTHORIZATION_FAILED && t.name !== null) t.topicAuthorizedOperations = auth.authorizedOperations(context, ResourceType.TOPIC, t.name)
    let clusterAuthorizedOperations = AUTHORIZED_OPERATIONS_OMITTED
    if (request.includeClusterAuthorizedOperations)
      clusterAuthorizedOperations = auth.authorizeCluster(context, AclOperation.DESCRIBE) ? auth.authorizedOperations(context, ResourceType.CLUSTER, CLUSTER_NAME) : 0
    return {
      throttleTimeMs: 0,
      brokers,
      clusterId: broker.config.clusterId,
      controllerId: controllerIdForClients(broker),
      topics,
      clusterAuthorizedOperations,
      errorCode: ErrorCode.NONE,
    }
  }
}

/**
 * The controller id clients are told (Metadata, DescribeCluster): the elected controller while it
 * is alive, else this broker, never -1 from a live cluster. Kafka's KRaft brokers answer a random
 * live broker there, since clients send their admin requests to it and any broker serves them
 * (forwarding to the controller); every ferrolog broker serves them itself. Between a
 * controller's stop and the next election, -1 would fail clients that look the id up (kafkajs's
 * transactional producer: "Broker -1 not found in the cached metadata").
 */
export function controllerIdForClients(broker: BrokerContext): number {
  const controller = broker.metadataCache.controllerId()
  return broker.metadataCache.aliveBrokers().some((b) => b.id === controller) ? controller : broker.config.nodeId
}
