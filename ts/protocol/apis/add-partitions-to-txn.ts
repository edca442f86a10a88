/**
 * AddPartitionsToTxn (key 24), served v0-v4; v3+ flexible. v0-v3 (a client adding partitions to
 * its transaction) carry one transaction at the top level: Kafka's schema names those fields
 * `v3AndBelowTransactionalId`, `v3AndBelowProducerId`, `v3AndBelowProducerEpoch`,
 * `v3AndBelowTopics`, and the answer `resultsByTopicV3AndBelow`. v4 (KIP-890 part 1, broker to
 * coordinator) batches them in `transactions`, each with `verifyOnly` to ask whether partitions
 * are in the ongoing transaction, and answers in `resultsByTransaction`; without verifyOnly it
 * adds them for a transaction version 2 client, whose Produce or TxnOffsetCommit reached the
 * partition leader (KIP-890 part 2). v5 is v4 where the answer may be TRANSACTION_ABORTABLE. The
 * codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the versions
 * the broker serves.
 */
import { addPartitionsToTxnRequestCodec, type AddPartitionsToTxnRequest, type AddPartitionsToTxnTopic, type AddPartitionsToTxnTransaction } from '../messages/add-partitions-to-txn-request.js'
import {
  addPartitionsToTxnResponseCodec,
  type AddPartitionsToTxnPartitionResult,
  type AddPartitionsToTxnResponse,
  type AddPartitionsToTxnResult,
  type AddPartitionsToTxnTopicResult,
} from '../messages/add-partitions-to-txn-response.js'
import { servedCodec } from './api.js'

export type {
  AddPartitionsToTxnPartitionResult,
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResponse,
  AddPartitionsToTxnResult,
  AddPartitionsToTxnTopic,
  AddPartitionsToTxnTopicResult,
  AddPartitionsToTxnTransaction,
}

/** The first version that batches transactions (broker to coordinator). */
export const ADD_PARTITIONS_TO_TXN_BATCHED_FROM = 4
/** The version brokers send (Kafka's `AddPartitionsToTxnRequest.Builder.forBroker`: the latest). */
export const ADD_PARTITIONS_TO_TXN_BROKER_VERSION = 5

export const addPartitionsToTxnCodec = servedCodec(addPartitionsToTxnRequestCodec, addPartitionsToTxnResponseCodec, 0, 5)
