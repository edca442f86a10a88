/**
 * ListTransactions (key 66), served v0-v1; flexible. v1 adds durationFilter (-1: none; else only
 * transactions running longer than this many ms). v2's transactionalIdPattern (KIP-1152) is not
 * served: it stays null. The codecs are generated from Kafka's schemas (ts/protocol/messages);
 * this module names the versions the broker serves.
 */
import { listTransactionsRequestCodec, type ListTransactionsRequest } from '../messages/list-transactions-request.js'
import { listTransactionsResponseCodec, type ListTransactionsResponse, type TransactionState } from '../messages/list-transactions-response.js'
import { servedCodec } from './api.js'

export type { ListTransactionsRequest, ListTransactionsResponse, TransactionState }

export const listTransactionsCodec = servedCodec(listTransactionsRequestCodec, listTransactionsResponseCodec, 0, 1)
