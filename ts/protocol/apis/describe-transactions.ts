/**
 * DescribeTransactions (key 65, KIP-664), served v0; flexible. The state of transactional ids
 * (kafka-transactions.sh describe). The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { describeTransactionsRequestCodec, type DescribeTransactionsRequest } from '../messages/describe-transactions-request.js'
import { describeTransactionsResponseCodec, type DescribeTransactionsResponse, type TransactionState } from '../messages/describe-transactions-response.js'
import { servedCodec } from './api.js'

export type { DescribeTransactionsRequest, DescribeTransactionsResponse }
/** One transactional id's state (Kafka's TransactionState). */
export type TransactionStateDescription = TransactionState

export const describeTransactionsCodec = servedCodec(describeTransactionsRequestCodec, describeTransactionsResponseCodec, 0, 0)
