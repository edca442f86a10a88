/**
 * A request answered with one Kafka error, the way Kafka's broker answers it (each request
 * class's `getErrorResponse` in org.apache.kafka.common.requests): in every partition the request
 * names for the APIs whose errors are per partition (Produce, Fetch, ListOffsets, OffsetCommit,
 * TxnOffsetCommit, OffsetFetch v0-1, OffsetForLeaderEpoch, DeleteRecords, AddPartitionsToTxn
 * v0-3), in every topic for
 * Metadata, CreateTopics, DeleteTopics and CreatePartitions, in every group for DescribeGroups and
 * DeleteGroups, per key for FindCoordinator v4+ and OffsetFetch v8+ groups, and in the top-level
 * `errorCode` for the APIs that have one (InitProducerId, JoinGroup, Heartbeat, EndTxn, ...).
 * Fault injection (fault-injector.ts) uses it; the broker's own handlers answer their errors
 * themselves.
 *
 * Fetch: Kafka's getErrorResponse sets the top-level error and, below v13, the same error in
 * every partition. Here every partition the request names carries it at every version (what a
 * broker that lost a partition's leadership answers), and the top-level error is set when the
 * request names no partition (an incremental fetch with nothing changed: a partition error
 * would have nowhere to go).
 *
 * `errorResponse` returns undefined for the other ApiKeys without a top-level error (the ACL and
 * config APIs, WriteTxnMarkers, DescribeProducers, ...: results per resource, not built here;
 * `hasErrorResponse` tells, and inject() refuses an error for them); the caller checks that the version asked can
 * carry it (`carriesError`): DescribeLogDirs before v3 cannot, with Kafka's broker either.
 */
import { apiMessageType } from '../protocol/messages/api-message-type.js'
import { ApiKey } from '../protocol/apis/api.js'
import type { ProduceRequest } from '../protocol/messages/produce-request.js'
import { defaultLeaderIdAndEpoch as defaultProduceLeader, type ProduceResponse } from '../protocol/messages/produce-response.js'
import type { FetchRequest } from '../protocol/messages/fetch-request.js'
import { defaultEpochEndOffset, defaultLeaderIdAndEpoch, defaultSnapshotId, type FetchResponse } from '../protocol/messages/fetch-response.js'
import type { ListOffsetsRequest } from '../protocol/messages/list-offsets-request.js'
import type { ListOffsetsResponse } from '../protocol/messages/list-offsets-response.js'
import type { MetadataRequest } from '../protocol/messages/metadata-request.js'
import type { MetadataResponse } from '../protocol/messages/metadata-response.js'
import type { OffsetCommitRequest } from '../protocol/messages/offset-commit-request.js'
import type { OffsetCommitResponse } from '../protocol/messages/offset-commit-response.js'
import type { OffsetFetchRequest } from '../protocol/messages/offset-fetch-request.js'
import type { OffsetFetchResponse } from '../protocol/messages/offset-fetch-response.js'
import type { FindCoordinatorRequest } from '../protocol/messages/find-coordinator-request.js'
import type { FindCoordinatorResponse } from '../protocol/messages/find-coordinator-response.js'
import type { TxnOffsetCommitRequest } from '../protocol/messages/txn-offset-commit-request.js'
import type { TxnOffsetCommitResponse } from '../protocol/messages/txn-offset-commit-response.js'
import type { OffsetForLeaderEpochRequest } from '../protocol/messages/offset-for-leader-epoch-request.js'
import type { OffsetForLeaderEpochResponse } from '../protocol/messages/offset-for-leader-epoch-response.js'
import type { DeleteRecordsRequest } from '../protocol/messages/delete-records-request.js'
import type { DeleteRecordsResponse } from '../protocol/messages/delete-records-response.js'
import type { AddPartitionsToTxnRequest } from '../protocol/messages/add-partitions-to-txn-request.js'
import type { AddPartitionsToTxnResponse } from '../protocol/messages/add-partitions-to-txn-response.js'
import type { CreateTopicsRequest } from '../protocol/messages/create-topics-request.js'
import { defaultCreatableTopicResult, type CreateTopicsResponse } from '../protocol/messages/create-topics-response.js'
import type { DeleteTopicsRequest } from '../protocol/messages/delete-topics-request.js'
import { defaultDeletableTopicResult, type DeleteTopicsResponse } from '../protocol/messages/delete-topics-response.js'
import type { CreatePartitionsRequest } from '../protocol/messages/create-partitions-request.js'
import type { CreatePartitionsResponse } from '../protocol/messages/create-partitions-response.js'
import type { DescribeGroupsRequest } from '../protocol/messages/describe-groups-request.js'
import { defaultDescribedGroup, type DescribeGroupsResponse } from '../protocol/messages/describe-groups-response.js'
import type { DeleteGroupsRequest } from '../protocol/messages/delete-groups-request.js'
import type { DeleteGroupsResponse } from '../protocol/messages/delete-groups-response.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'

/** A partition a request names: by topic name, or by topic id (Fetch v13+, resolved by the caller). */
export interface RequestPartition {
  topic: string | null
  topicId: Buffer | null
  partition: number | null
}

type Builder = (request: any, version: number, errorCode: number) => unknown // eslint-disable-line @typescript-eslint/no-explicit-any

/** Kafka's `-1` for an offset or timestamp it cannot give (ProduceResponse.INVALID_OFFSET, RecordBatch.NO_TIMESTAMP). */
const UNKNOWN = -1n

const BUILDERS = new Map<number, Builder>([
  [
    ApiKey.Produce,
    (req: ProduceRequest<unknown>, _v, errorCode): ProduceResponse | null =>
      // acks=0: Kafka sends no response at all (ProduceRequest.getErrorResponse returns null; its
      // KafkaApis closes the connection instead).
      req.acks === 0
        ? null
        : {
            throttleTimeMs: 0,
            nodeEndpoints: [],
            responses: req.topicData.map((t) => ({
              name: t.name,
              topicId: t.topicId,
              partitionResponses: t.partitionData.map((p) => ({
                index: p.index,
                errorCode,
                baseOffset: UNKNOWN,
                logAppendTimeMs: UNKNOWN,
                logStartOffset: UNKNOWN,
                recordErrors: [],
                errorMessage: null,
                currentLeader: defaultProduceLeader(),
              })),
            })),
          },
  ],
  [
    ApiKey.Fetch,
    (req: FetchRequest, _v, errorCode): FetchResponse<Buffer | null> => ({
      throttleTimeMs: 0,
      errorCode: req.topics.some((t) => t.partitions.length > 0) ? 0 : errorCode,
      sessionId: req.sessionId,
      nodeEndpoints: [],
      responses: req.topics.map((t) => ({
        topic: t.topic,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partition,
          errorCode,
          highWatermark: UNKNOWN,
          lastStableOffset: UNKNOWN,
          logStartOffset: UNKNOWN,
          divergingEpoch: defaultEpochEndOffset(),
          currentLeader: defaultLeaderIdAndEpoch(),
          snapshotId: defaultSnapshotId(),
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: null,
        })),
      })),
    }),
  ],
  [
    ApiKey.ListOffsets,
    (req: ListOffsetsRequest, _v, errorCode): ListOffsetsResponse => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, timestamp: UNKNOWN, offset: UNKNOWN, leaderEpoch: -1 })),
      })),
    }),
  ],
  [
    ApiKey.Metadata,
    // Kafka's MetadataRequest.getErrorResponse: every topic asked carries the error, no brokers.
    (req: MetadataRequest, _v, errorCode): MetadataResponse => ({
      throttleTimeMs: 0,
      brokers: [],
      clusterId: null,
      controllerId: -1,
      clusterAuthorizedOperations: -2147483648,
      errorCode: 0,
      topics: (req.topics ?? []).map((t) => ({ errorCode, name: t.name, topicId: t.topicId, isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 })),
    }),
  ],
  [
    ApiKey.OffsetCommit,
    (req: OffsetCommitRequest, _v, errorCode): OffsetCommitResponse => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    }),
  ],
  [
    ApiKey.TxnOffsetCommit,
    (req: TxnOffsetCommitRequest, _v, errorCode): TxnOffsetCommitResponse => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    }),
  ],
  [
    ApiKey.OffsetFetch,
    // Kafka's OffsetFetchRequest.getErrorResponse: v8+ per group; v2-7 the top-level error; v0-1 every partition asked.
    (req: OffsetFetchRequest, version, errorCode): OffsetFetchResponse => {
      const partition = (partitionIndex: number) => ({ partitionIndex, committedOffset: UNKNOWN, committedLeaderEpoch: -1, metadata: '', errorCode: version <= 1 ? errorCode : 0 })
      return {
        throttleTimeMs: 0,
        errorCode: version >= 2 && version <= 7 ? errorCode : 0,
        topics: version <= 7 ? (req.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map(partition) })) : [],
        groups: version >= 8 ? req.groups.map((g) => ({ groupId: g.groupId, errorCode, topics: [] })) : [],
      }
    },
  ],
  [
    ApiKey.FindCoordinator,
    // v0-3 one key, the top-level error; v4+ every key asked carries it.
    (req: FindCoordinatorRequest, version, errorCode): FindCoordinatorResponse =>
      version >= 4
        ? {
            throttleTimeMs: 0,
            errorCode: 0,
            errorMessage: '',
            nodeId: 0,
            host: '',
            port: 0,
            coordinators: req.coordinatorKeys.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: null })),
          }
        : { throttleTimeMs: 0, errorCode, errorMessage: null, nodeId: -1, host: '', port: -1, coordinators: [] },
  ],
  [
    ApiKey.OffsetForLeaderEpoch,
    (req: OffsetForLeaderEpochRequest, _v, errorCode): OffsetForLeaderEpochResponse => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ errorCode, partition: p.partition, leaderEpoch: -1, endOffset: UNKNOWN })) })),
    }),
  ],
  [
    ApiKey.CreateTopics,
    (req: CreateTopicsRequest, _v, errorCode): CreateTopicsResponse => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ ...defaultCreatableTopicResult(), name: t.name, errorCode, errorMessage: null, numPartitions: -1, replicationFactor: -1, configs: null })),
    }),
  ],
  [
    ApiKey.DeleteTopics,
    // v0-5 name topics in topicNames, v6+ in topics (by name or id).
    (req: DeleteTopicsRequest, _v, errorCode): DeleteTopicsResponse => ({
      throttleTimeMs: 0,
      responses: [
        ...req.topicNames.map((name) => ({ ...defaultDeletableTopicResult(), name, errorCode })),
        ...req.topics.map((t) => ({ ...defaultDeletableTopicResult(), name: t.name, topicId: t.topicId, errorCode })),
      ],
    }),
  ],
  [
    ApiKey.CreatePartitions,
    (req: CreatePartitionsRequest, _v, errorCode): CreatePartitionsResponse => ({ throttleTimeMs: 0, results: req.topics.map((t) => ({ name: t.name, errorCode, errorMessage: null })) }),
  ],
  [
    ApiKey.DescribeGroups,
    (req: DescribeGroupsRequest, _v, errorCode): DescribeGroupsResponse => ({ throttleTimeMs: 0, groups: req.groups.map((groupId) => ({ ...defaultDescribedGroup(), groupId, errorCode })) }),
  ],
  [
    ApiKey.DeleteGroups,
    (req: DeleteGroupsRequest, _v, errorCode): DeleteGroupsResponse => ({ throttleTimeMs: 0, results: req.groupsNames.map((groupId) => ({ groupId, errorCode, errorMessage: null })) }),
  ],
  [
    ApiKey.AddPartitionsToTxn,
    // Kafka's AddPartitionsToTxnRequest.getErrorResponse: v0-3 every partition; v4+ (batched, from brokers) the top-level error.
    (req: AddPartitionsToTxnRequest, version, errorCode): AddPartitionsToTxnResponse => ({
      throttleTimeMs: 0,
      errorCode: version >= 4 ? errorCode : 0,
      resultsByTransaction: [],
      resultsByTopicV3AndBelow:
        version <= 3 ? req.v3AndBelowTopics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorCode })) })) : [],
    }),
  ],
  [
    ApiKey.DeleteRecords,
    (req: DeleteRecordsRequest, _v, errorCode): DeleteRecordsResponse => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, lowWatermark: UNKNOWN, errorCode })) })),
    }),
  ],
])

/** The ApiKey's response has a place for an error: partitions, keys or a top-level `errorCode`. */
export function hasErrorResponse(apiKey: number): boolean {
  if (BUILDERS.has(apiKey)) return true
  const response = apiMessageType(apiKey)?.response.defaults() as Record<string, unknown> | undefined
  return response !== undefined && typeof response['errorCode'] === 'number'
}

/**
 * The response answering `request` (decoded, of `version`) with `errorCode`; null for none (Produce
 * acks=0); undefined when the ApiKey's response has no place for an error.
 */
export function errorResponse(apiKey: number, version: number, request: unknown, errorCode: number): unknown {
  const build = BUILDERS.get(apiKey)
  if (build) return build(request, version, errorCode)
  const type = apiMessageType(apiKey)
  const response = type?.response.defaults() as Record<string, unknown> | undefined
  if (response === undefined || typeof response['errorCode'] !== 'number') return undefined
  response['errorCode'] = errorCode
  return response
}

/**
 * The version can carry the error: the response, written and read back at `version`, still holds
 * `errorCode` somewhere (a field a version lacks is dropped when written, e.g. Fetch's top-level
 * error before v7).
 */
export function carriesError(apiKey: number, version: number, response: unknown, errorCode: number): boolean {
  const type = apiMessageType(apiKey)
  if (!type) return false
  const w = new Writer()
  try {
    type.response.write(w, version, response)
  } catch {
    return false
  }
  return holds(type.response.read(new Reader(w.finish()), version), errorCode)
}

function holds(value: unknown, errorCode: number): boolean {
  if (Array.isArray(value)) return value.some((v) => holds(v, errorCode))
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return false
  for (const [key, v] of Object.entries(value)) {
    if ((key === 'errorCode' || key.endsWith('ErrorCode')) && v === errorCode) return true
    if (typeof v === 'object' && holds(v, errorCode)) return true
  }
  return false
}

/** The partitions (or topics, `partition` null) a request names, for the APIs that name any. */
export function requestPartitions(apiKey: number, request: unknown): RequestPartition[] {
  const out: RequestPartition[] = []
  const add = (topic: string | null, topicId: Buffer | null, partition: number | null) => out.push({ topic: topic === '' ? null : topic, topicId, partition })
  switch (apiKey) {
    case ApiKey.Produce:
      for (const t of (request as ProduceRequest<unknown>).topicData) for (const p of t.partitionData) add(t.name, t.topicId, p.index)
      break
    case ApiKey.Fetch:
      for (const t of (request as FetchRequest).topics) for (const p of t.partitions) add(t.topic, t.topicId, p.partition)
      break
    case ApiKey.ListOffsets:
      for (const t of (request as ListOffsetsRequest).topics) for (const p of t.partitions) add(t.name, null, p.partitionIndex)
      break
    case ApiKey.Metadata:
      for (const t of (request as MetadataRequest).topics ?? []) add(t.name, t.topicId, null)
      break
    case ApiKey.OffsetCommit:
      for (const t of (request as OffsetCommitRequest).topics) for (const p of t.partitions) add(t.name, t.topicId, p.partitionIndex)
      break
    case ApiKey.TxnOffsetCommit:
      for (const t of (request as TxnOffsetCommitRequest).topics) for (const p of t.partitions) add(t.name, t.topicId, p.partitionIndex)
      break
    case ApiKey.OffsetForLeaderEpoch:
      for (const t of (request as OffsetForLeaderEpochRequest).topics) for (const p of t.partitions) add(t.topic, null, p.partition)
      break
    case ApiKey.AddPartitionsToTxn: {
      const req = request as AddPartitionsToTxnRequest
      for (const t of req.v3AndBelowTopics) for (const p of t.partitions) add(t.name, null, p)
      for (const txn of req.transactions) for (const t of txn.topics) for (const p of t.partitions) add(t.name, null, p)
      break
    }
    case ApiKey.CreateTopics:
      for (const t of (request as CreateTopicsRequest).topics) add(t.name, null, null)
      break
    case ApiKey.DeleteTopics: {
      const req = request as DeleteTopicsRequest
      for (const name of req.topicNames) add(name, null, null)
      for (const t of req.topics) add(t.name, t.topicId, null)
      break
    }
    case ApiKey.CreatePartitions:
      for (const t of (request as CreatePartitionsRequest).topics) add(t.name, null, null)
      break
    case ApiKey.DeleteRecords:
      for (const t of (request as DeleteRecordsRequest).topics) for (const p of t.partitions) add(t.name, null, p.partitionIndex)
      break
  }
  return out
}
