/**
 * OffsetCommit (key 8), served v2-v9; v8+ flexible. Kafka 4.0 removed v0-v1 (KIP-896), so v2 is
 * the floor. v9 (KIP-848) has the shape of v8 and still names topics; topic ids replace names only
 * in v10 (Kafka 4.1+), not served here, so a topic's topicId stays all zeroes. The codecs are
 * generated from Kafka's schemas (ts/protocol/messages); this module names the versions served.
 */
import { offsetCommitRequestCodec, type OffsetCommitRequest, type OffsetCommitRequestTopic, type OffsetCommitRequestPartition } from '../messages/offset-commit-request.js'
import { offsetCommitResponseCodec, type OffsetCommitResponse, type OffsetCommitResponseTopic, type OffsetCommitResponsePartition } from '../messages/offset-commit-response.js'
import { servedCodec } from './api.js'

export type { OffsetCommitRequest, OffsetCommitRequestTopic, OffsetCommitRequestPartition, OffsetCommitResponse, OffsetCommitResponseTopic, OffsetCommitResponsePartition }

export const offsetCommitCodec = servedCodec(offsetCommitRequestCodec, offsetCommitResponseCodec, 2, 9)
