/**
 * EndTxn (key 26), served v0-v5; v3+ flexible. v4 has the shape of v3 (KIP-890 part 1: the client
 * understands TRANSACTION_ABORTABLE). v5 is a client of transaction version 2 (KIP-890 part 2):
 * the response carries the producer id and epoch to use next (below v5 they stay at their
 * defaults, -1, and never reach the wire). The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { endTxnRequestCodec, type EndTxnRequest } from '../messages/end-txn-request.js'
import { endTxnResponseCodec, type EndTxnResponse } from '../messages/end-txn-response.js'
import { servedCodec } from './api.js'

export type { EndTxnRequest, EndTxnResponse }

export const endTxnCodec = servedCodec(endTxnRequestCodec, endTxnResponseCodec, 0, 5)
