/**
 * DescribeLogDirs (key 35), served v1-v4 (v0 went with Kafka 4.0, KIP-896); v2+ flexible.
 * totalBytes and usableBytes (v4+) are ignorable (-1 when unknown); the top-level errorCode (v3+)
 * is not, so encoding a non-zero one before v3 throws. v5's isCordoned (KIP-1066) is not served
 * and stays false. The codecs are generated from Kafka's schemas (ts/protocol/messages); this
 * module names the versions the broker serves.
 */
import { describeLogDirsRequestCodec, type DescribeLogDirsRequest, type DescribableLogDirTopic } from '../messages/describe-log-dirs-request.js'
import {
  describeLogDirsResponseCodec,
  type DescribeLogDirsResponse,
  type DescribeLogDirsResult,
  type DescribeLogDirsTopic,
  type DescribeLogDirsPartition,
} from '../messages/describe-log-dirs-response.js'
import { servedCodec } from './api.js'

export type { DescribeLogDirsRequest, DescribableLogDirTopic, DescribeLogDirsResponse, DescribeLogDirsResult, DescribeLogDirsTopic, DescribeLogDirsPartition }

export const describeLogDirsCodec = servedCodec(describeLogDirsRequestCodec, describeLogDirsResponseCodec, 1, 4)
