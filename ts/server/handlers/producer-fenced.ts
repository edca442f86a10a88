/**
 * Kafka 2.7 (KIP-588) answers a fenced transactional producer PRODUCER_FENCED; clients of older
 * request versions do not know that code, so they get INVALID_PRODUCER_EPOCH, which they handle
 * the same way (KafkaApis does this for InitProducerId < v4, AddPartitionsToTxn, AddOffsetsToTxn
 * and EndTxn < v2).
 */
import { ErrorCode } from '../../protocol/error-codes.js'

export function producerFencedFor(errorCode: number, version: number, firstVersionKnowingIt: number): number {
  return errorCode === ErrorCode.PRODUCER_FENCED && version < firstVersionKnowingIt ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode
}
