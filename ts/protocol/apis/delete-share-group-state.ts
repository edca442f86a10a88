/**
 * DeleteShareGroupState (key 86, KIP-932), v0-v0 as Kafka 4.4 serves it; flexible. An inter-broker request to the
 * share coordinator (ts/coordinator/share/share-coordinator.ts): a share partition's state is deleted. The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { deleteShareGroupStateRequestCodec, type DeleteShareGroupStateRequest } from '../messages/delete-share-group-state-request.js'
import { deleteShareGroupStateResponseCodec, type DeleteShareGroupStateResponse } from '../messages/delete-share-group-state-response.js'
import { servedCodec } from './api.js'

export type { DeleteShareGroupStateRequest, DeleteShareGroupStateResponse }

export const deleteShareGroupStateCodec = servedCodec(deleteShareGroupStateRequestCodec, deleteShareGroupStateResponseCodec, 0, 0)
