/**
 * AlterPartitionReassignments: each named partition's target replicas checked as Kafka's
 * controller checks them (ReplicationControlManager), with its errors and messages per partition:
 *
 * - a topic or partition that does not exist: UNKNOWN_TOPIC_OR_PARTITION;
 * - a cancellation (replicas null) where no reassignment is in progress: NO_REASSIGNMENT_IN_PROGRESS
 *   (here none ever is, see below);
 * - an empty list, a broker that is not registered (not alive here) or named twice:
 *   INVALID_REPLICA_ASSIGNMENT;
 * - with v1's allowReplicationFactorChange false, a target of another length:
 *   INVALID_REPLICATION_FACTOR;
 * - the target the partition already has: done, nothing changes (Kafka writes no record).
 *
 * A standalone broker is a cluster of one: the only valid target is itself, the replica it already
 * has, so every valid reassignment is done as asked. In cluster mode, moving replicas to other
 * brokers (Kafka's adding replicas, caught up into the ISR, then the removing ones dropped) is not
 * served yet: such a target is refused with INVALID_REPLICA_ASSIGNMENT and a message saying so,
 * and nothing changes; so no reassignment is ever in progress (ListPartitionReassignments lists
 * none).
 *
 * Authorization (Kafka's ControllerApis): ALTER on the CLUSTER resource, else
 * CLUSTER_AUTHORIZATION_FAILED at the top and in every partition.
 */
import type { AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse } from '../../protocol/apis/alter-partition-reassignments.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

interface Outcome {
  errorCode: number
  errorMessage: string | null
}

const DONE: Outcome = { errorCode: ErrorCode.NONE, errorMessage: null }

export function alterPartitionReassignmentsHandler(broker: BrokerContext): ApiHandler<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse> {
  return (request, context) => {
    const answer = (outcome: (topic: string, partition: number, replicas: number[] | null) => Outcome, top: Outcome = DONE): AlterPartitionReassignmentsResponse => ({
      throttleTimeMs: 0,
      allowReplicationFactorChange: request.allowReplicationFactorChange,
      ...top,
      responses: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, ...outcome(t.name, p.partitionIndex, p.replicas) })),
      })),
    })
    if (!broker.auth.authorizeCluster(context, AclOperation.ALTER)) {
      const refused = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' }
      return answer(() => refused, refused)
    }
    return answer((topic, partition, replicas) => reassign(broker, topic, partition, replicas, request.allowReplicationFactorChange))
  }
}

function reassign(broker: BrokerContext, topicName: string, partition: number, target: number[] | null, allowReplicationFactorChange: boolean): Outcome {
  const topic = broker.visibleTopic(topicName)
  if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find a topic named ${topicName}.`)
  const registration = partition >= 0 && partition < topic.partitions ? broker.metadataCache.partitionRegistration(topicName, partition) : undefined
  if (!registration) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find partition ${topicName}:${partition}.`)
  if (target === null) return fail(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.')
  const invalid = invalidAssignment(target, new Set(broker.metadataCache.aliveBrokers().map((b) => b.id)))
  if (invalid) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, invalid)
  if (!allowReplicationFactorChange && target.length !== registration.replicas.length) {
    return fail(ErrorCode.INVALID_REPLICATION_FACTOR, `The replication factor is changed from ${registration.replicas.length} to ${target.length}`)
  }
  if (target.length === registration.replicas.length && target.every((id, i) => registration.replicas[i] === id)) return DONE
  return fail(
    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    `ferrolog does not move replicas yet: ${topicName}:${partition} keeps its replicas [${registration.replicas.join(', ')}] (asked: [${target.join(', ')}]).`,
  )
}

/** Kafka's validateManualPartitionAssignment (no replication factor to match): its message, or null. */
function invalidAssignment(replicas: readonly number[], registered: ReadonlySet<number>): string | null {
  if (replicas.length === 0) return 'The manual partition assignment includes an empty replica list.'
  const sorted = [...replicas].sort((a, b) => a - b)
  for (let i = 0; i < sorted.length; i++) {
    if (!registered.has(sorted[i]!)) return `The manual partition assignment includes broker ${sorted[i]}, but no such broker is registered.`
    if (i > 0 && sorted[i] === sorted[i - 1]) return `The manual partition assignment includes the broker ${sorted[i]} more than once.`
  }
  return null
}

function fail(errorCode: number, errorMessage: string): Outcome {
  return { errorCode, errorMessage }
}
