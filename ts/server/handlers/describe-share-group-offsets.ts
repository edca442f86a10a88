/**
 * DescribeShareGroupOffsets (KIP-932; v1 KIP-1226's lag), as Kafka 4.4 answers it, group by group:
 * - share.version below 1: UNSUPPORTED_VERSION; no DESCRIBE on the group: GROUP_AUTHORIZATION_FAILED;
 * - topics null (every partition of the group): the partitions whose share state is initialized
 *   for the group (none for an unknown group), read from the group's coordinator (its status
 *   error else); the topics the principal may not DESCRIBE are left out;
 * - an empty topic list: the group with no topics;
 * - else each topic the principal may DESCRIBE: an unknown topic's partitions have start offset
 *   -1 (absent data, as OffsetFetch, not an error); a known one's are read from the share
 *   coordinator (ReadShareGroupStateSummary); the others are TOPIC_AUTHORIZATION_FAILED. The
 *   answer has the known topics, then the unknown ones, then those not authorized.
 * A partition the share coordinator answers with an error (not initialized) has start offset -1
 * and leader epoch 0, without error. The lag is the partition's high watermark less the start
 * offset and the records delivered past it (-1 when either is not known, or the partition's log
 * is not on this broker; Kafka asks the leader with ListOffsets).
 */
import type { DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse } from '../../protocol/apis/describe-share-group-offsets.js'
import type { DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponseTopic } from '../../protocol/messages/describe-share-group-offsets-response.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { supportsShareGroups } from '../broker-features.js'
import type { ApiHandler, RequestContext } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { errorMessageOf, forEachSharePartition, sharePartitionLag } from './share-group-offsets-helper.js'

const ZERO_UUID = Buffer.alloc(16)

export function describeShareGroupOffsetsHandler(broker: BrokerContext): ApiHandler<DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse> {
  return async (request, context) => ({
    throttleTimeMs: 0,
    groups: await Promise.all(request.groups.map((g) => describeGroup(broker, context, g.groupId, g.topics))),
  })
}

function groupError(groupId: string, errorCode: number, errorMessage: string | null = null): DescribeShareGroupOffsetsResponseGroup {
  return { groupId, topics: [], errorCode, errorMessage }
}

async function describeGroup(
  broker: BrokerContext,
  context: RequestContext,
  groupId: string,
  topics: Array<{ topicName: string; partitions: number[] }> | null,
): Promise<DescribeShareGroupOffsetsResponseGroup> {
  if (!supportsShareGroups(broker.finalizedFeatures)) return groupError(groupId, ErrorCode.UNSUPPORTED_VERSION)
  if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return groupError(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED)
  const describable = (name: string) => broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, name)

  if (topics === null) {
    const status = broker.groupCoordinator.statusError(groupId)
    if (status !== ErrorCode.NONE) return groupError(groupId, status, errorMessageOf(status))
    const wanted = new Map<string, number[]>()
    for (const [topicId, t] of broker.groupCoordinator.shareGroup(groupId)?.initializedTopics ?? []) {
      const topic = broker.topics.getById(Buffer.from(topicId, 'hex'))
      if (topic === undefined || !describable(topic.name)) continue
      wanted.set(
        topicId,
        [...t.partitions].sort((a, b) => a - b),
      )
    }
    return { groupId, topics: await readSummaries(broker, groupId, wanted), errorCode: ErrorCode.NONE, errorMessage: null }
  }
  if (topics.length === 0) return { groupId, topics: [], errorCode: ErrorCode.NONE, errorMessage: null }

  const unknown: DescribeShareGroupOffsetsResponseTopic[] = []
  const unauthorized: DescribeShareGroupOffsetsResponseTopic[] = []
  const wanted = new Map<string, number[]>()
  for (const t of topics) {
    if (!describable(t.topicName)) {
      const errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED
      unauthorized.push({
        topicName: t.topicName,
        topicId: ZERO_UUID,
        partitions: t.partitions.map((p) => ({ partitionIndex: p, startOffset: -1n, leaderEpoch: 0, lag: -1n, errorCode, errorMessage: errorMessageOf(errorCode) })),
      })
      continue
    }
    const topic = broker.topics.get(t.topicName)
    if (topic === undefined) {
      unknown.push({
        topicName: t.topicName,
        topicId: ZERO_UUID,
        partitions: t.partitions.map((p) => ({ partitionIndex: p, startOffset: -1n, leaderEpoch: 0, lag: -1n, errorCode: ErrorCode.NONE, errorMessage: null })),
      })
      continue
    }
    const id = topic.topicId.toString('hex')
    wanted.set(id, [...(wanted.get(id) ?? []), ...t.partitions])
  }
  return { groupId, topics: [...(await readSummaries(broker, groupId, wanted)), ...unknown, ...unauthorized], errorCode: ErrorCode.NONE, errorMessage: null }
}

/** Each partition's start offset, leader epoch and lag from the share coordinator. */
async function readSummaries(broker: BrokerContext, groupId: string, wanted: ReadonlyMap<string, readonly number[]>): Promise<DescribeShareGroupOffsetsResponseTopic[]> {
  const results = await forEachSharePartition(groupId, wanted, (key) => broker.persister.readStateSummary(key))
  const out: DescribeShareGroupOffsetsResponseTopic[] = []
  for (const [topicId, partitions] of results) {
    const topic = broker.topics.getById(Buffer.from(topicId, 'hex'))
    if (topic === undefined) continue
    out.push({
      topicName: topic.name,
      topicId: topic.topicId,
      partitions: partitions.map(({ partition, result }) => {
        const s = result.errorCode === ErrorCode.NONE ? result.data : null
        if (s === null) return { partitionIndex: partition, startOffset: -1n, leaderEpoch: 0, lag: -1n, errorCode: ErrorCode.NONE, errorMessage: null }
        return {
          partitionIndex: partition,
          startOffset: s.startOffset,
          leaderEpoch: s.leaderEpoch,
          lag: sharePartitionLag(broker, topic.name, partition, s.startOffset, s.deliveryCompleteCount),
          errorCode: ErrorCode.NONE,
          errorMessage: null,
        }
      }),
    })
  }
  return out
}
