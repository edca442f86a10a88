/**
 * ReadShareGroupState (key 84, KIP-932), v0-v0 as Kafka 4.4 serves it; flexible. An inter-broker request to the
 * share coordinator (ts/coordinator/share/share-coordinator.ts): a share partition's leader reads its state when it loads the share partition. The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { readShareGroupStateRequestCodec, type ReadShareGroupStateRequest } from '../messages/read-share-group-state-request.js'
import { readShareGroupStateResponseCodec, type ReadShareGroupStateResponse } from '../messages/read-share-group-state-response.js'
import { servedCodec } from './api.js'

export type { ReadShareGroupStateRequest, ReadShareGroupStateResponse }

export const readShareGroupStateCodec = servedCodec(readShareGroupStateRequestCodec, readShareGroupStateResponseCodec, 0, 0)
