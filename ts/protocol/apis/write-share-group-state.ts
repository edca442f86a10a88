/**
 * WriteShareGroupState (key 85, KIP-932), v0-v1 as Kafka 4.4 serves it; flexible. An inter-broker request to the
 * share coordinator (ts/coordinator/share/share-coordinator.ts): a share partition's leader writes the state batches that changed. The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { writeShareGroupStateRequestCodec, type WriteShareGroupStateRequest } from '../messages/write-share-group-state-request.js'
import { writeShareGroupStateResponseCodec, type WriteShareGroupStateResponse } from '../messages/write-share-group-state-response.js'
import { servedCodec } from './api.js'

export type { WriteShareGroupStateRequest, WriteShareGroupStateResponse }

export const writeShareGroupStateCodec = servedCodec(writeShareGroupStateRequestCodec, writeShareGroupStateResponseCodec, 0, 1)
