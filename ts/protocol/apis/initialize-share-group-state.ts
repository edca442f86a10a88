/**
 * InitializeShareGroupState (key 83, KIP-932), v0-v0 as Kafka 4.4 serves it; flexible. An inter-broker request to the
 * share coordinator (ts/coordinator/share/share-coordinator.ts): a share partition's state begins (its state epoch and start offset). The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { initializeShareGroupStateRequestCodec, type InitializeShareGroupStateRequest } from '../messages/initialize-share-group-state-request.js'
import { initializeShareGroupStateResponseCodec, type InitializeShareGroupStateResponse } from '../messages/initialize-share-group-state-response.js'
import { servedCodec } from './api.js'

export type { InitializeShareGroupStateRequest, InitializeShareGroupStateResponse }

export const initializeShareGroupStateCodec = servedCodec(initializeShareGroupStateRequestCodec, initializeShareGroupStateResponseCodec, 0, 0)
