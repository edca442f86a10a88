/**
 * TxnOffsetCommit (key 28), served v0-v5; v3+ flexible. v3 (KIP-447) carries the consumer's group
 * metadata (generationIdOrMemberEpoch, memberId, groupInstanceId) so the coordinator can fence
 * zombies. v4 knows TRANSACTION_ABORTABLE (KIP-890 part 1); v5 is v4 from a client of transaction
 * version 2 (KIP-890 part 2), which sends no AddOffsetsToTxn: the commit adds the offsets
 * partition to the transaction. v6 (topic ids) is not served, so a topic's topicId stays all
 * zeroes. The codecs are generated from Kafka's schemas (ts/protocol/messages);
 * this module names the versions the broker serves.
 */
import { txnOffsetCommitRequestCodec, type TxnOffsetCommitRequest, type TxnOffsetCommitRequestTopic, type TxnOffsetCommitRequestPartition } from '../messages/txn-offset-commit-request.js'
import { txnOffsetCommitResponseCodec, type TxnOffsetCommitResponse, type TxnOffsetCommitResponseTopic, type TxnOffsetCommitResponsePartition } from '../messages/txn-offset-commit-response.js'
import { servedCodec } from './api.js'

export type { TxnOffsetCommitRequest, TxnOffsetCommitRequestTopic, TxnOffsetCommitRequestPartition, TxnOffsetCommitResponse, TxnOffsetCommitResponseTopic, TxnOffsetCommitResponsePartition }

export const txnOffsetCommitCodec = servedCodec(txnOffsetCommitRequestCodec, txnOffsetCommitResponseCodec, 0, 5)
