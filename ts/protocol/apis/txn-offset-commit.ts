/**
 * TxnOffsetCommit (key 28), served v0-v4; v3+ flexible. v3 (KIP-447) carries the consumer's group
 * metadata (generationIdOrMemberEpoch, memberId, groupInstanceId) so the coordinator can fence
 * zombies. v5 (KIP-890, TRANSACTION_ABORTABLE) and v6 (topic ids) are not served, so a topic's
 * topicId stays all zeroes. The codecs are generated from Kafka's schemas (ts/protocol/messages);
 * this module names the versions the broker serves.
 */
import { txnOffsetCommitRequestCodec, type TxnOffsetCommitRequest, type TxnOffsetCommitRequestTopic, type TxnOffsetCommitRequestPartition } from '../messages/txn-offset-commit-request.js'
import { txnOffsetCommitResponseCodec, type TxnOffsetCommitResponse, type TxnOffsetCommitResponseTopic, type TxnOffsetCommitResponsePartition } from '../messages/txn-offset-commit-response.js'
import { servedCodec } from './api.js'

export type { TxnOffsetCommitRequest, TxnOffsetCommitRequestTopic, TxnOffsetCommitRequestPartition, TxnOffsetCommitResponse, TxnOffsetCommitResponseTopic, TxnOffsetCommitResponsePartition }

export const txnOffsetCommitCodec = servedCodec(txnOffsetCommitRequestCodec, txnOffsetCommitResponseCodec, 0, 4)
