/**
 * What DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932's
 * admin APIs) have in common, as Kafka 4.4's KafkaApis and GroupCoordinatorService answer them:
 * the default messages of the errors they answer (Kafka's `Errors.message()`), and the share
 * coordinator's calls for every partition of a set, through the persister (ts/share/persister.ts).
 */
import { ErrorCode } from '../../protocol/error-codes.js'
import type { ShareStateResult } from '../../coordinator/share/share-coordinator.js'
import type { BrokerContext } from './broker-context.js'

/** Kafka's `Errors.message()` of the errors these APIs answer. */
export const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  [ErrorCode.UNSUPPORTED_VERSION]: 'The version of API is not supported.',
  [ErrorCode.GROUP_AUTHORIZATION_FAILED]: 'Group authorization failed.',
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED]: 'Topic authorization failed.',
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: 'This server does not host this topic-partition.',
  [ErrorCode.INVALID_GROUP_ID]: 'The configured groupId is invalid.',
  [ErrorCode.NOT_COORDINATOR]: 'This is not the correct coordinator.',
  [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]: "The coordinator is loading and hence can't process requests.",
  [ErrorCode.COORDINATOR_NOT_AVAILABLE]: 'The coordinator is not available.',
}

export function errorMessageOf(errorCode: number): string | null {
  return ERROR_MESSAGES[errorCode] ?? null
}

/** One share coordinator call per partition of `topics` (topic id hex → partitions), all at once; the answers by topic id, in order. */
export async function forEachSharePartition<T>(
  groupId: string,
  topics: ReadonlyMap<string, readonly number[]>,
  op: (key: { groupId: string; topicId: Buffer; partition: number }) => Promise<ShareStateResult<T>>,
): Promise<Map<string, Array<{ partition: number; result: ShareStateResult<T> }>>> {
  const out = new Map<string, Array<{ partition: number; result: ShareStateResult<T> }>>()
  await Promise.all(
    [...topics].map(async ([topicId, partitions]) => {
      const results = await Promise.all(partitions.map(async (partition) => ({ partition, result: await op({ groupId, topicId: Buffer.from(topicId, 'hex'), partition }) })))
      out.set(topicId, results)
    }),
  )
  return new Map([...topics.keys()].map((t) => [t, out.get(t)!]))
}

/** The share-partition lag (Kafka 4.4's KIP-1226): the partition's end offset less the start offset and the records delivered past it; -1 when not known. */
export function sharePartitionLag(broker: BrokerContext, topic: string, partition: number, startOffset: bigint, deliveryCompleteCount: number): bigint {
  if (startOffset === -1n || deliveryCompleteCount === -1) return -1n
  const log = broker.replicaManager.getLog({ topic, partition })
  if (log === undefined) return -1n
  return log.highWatermark() - startOffset - BigInt(deliveryCompleteCount)
}
