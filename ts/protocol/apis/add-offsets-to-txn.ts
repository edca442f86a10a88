/**
 * AddOffsetsToTxn (key 25), v0-v3; v3+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { addOffsetsToTxnRequestCodec, type AddOffsetsToTxnRequest } from '../messages/add-offsets-to-txn-request.js'
import { addOffsetsToTxnResponseCodec, type AddOffsetsToTxnResponse } from '../messages/add-offsets-to-txn-response.js'
import { servedCodec } from './api.js'

export type { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse }

export const addOffsetsToTxnCodec = servedCodec(addOffsetsToTxnRequestCodec, addOffsetsToTxnResponseCodec, 0, 3)
