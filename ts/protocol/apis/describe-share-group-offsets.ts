/**
 * DescribeShareGroupOffsets (key 90, KIP-932), v0-v1 as Kafka 4.4 serves it; flexible: each share partition's start offset, leader epoch and (v1, KIP-1226) lag. The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { describeShareGroupOffsetsRequestCodec, type DescribeShareGroupOffsetsRequest } from '../messages/describe-share-group-offsets-request.js'
import { describeShareGroupOffsetsResponseCodec, type DescribeShareGroupOffsetsResponse } from '../messages/describe-share-group-offsets-response.js'
import { servedCodec } from './api.js'

export type { DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse }

export const describeShareGroupOffsetsCodec = servedCodec(describeShareGroupOffsetsRequestCodec, describeShareGroupOffsetsResponseCodec, 0, 1)
