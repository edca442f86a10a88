/**
 * DeleteShareGroupOffsets (key 92, KIP-932), v0 as Kafka 4.4 serves it; flexible: deletes the share-partition states of topics of an empty share group. The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { deleteShareGroupOffsetsRequestCodec, type DeleteShareGroupOffsetsRequest } from '../messages/delete-share-group-offsets-request.js'
import { deleteShareGroupOffsetsResponseCodec, type DeleteShareGroupOffsetsResponse } from '../messages/delete-share-group-offsets-response.js'
import { servedCodec } from './api.js'

export type { DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse }

export const deleteShareGroupOffsetsCodec = servedCodec(deleteShareGroupOffsetsRequestCodec, deleteShareGroupOffsetsResponseCodec, 0, 0)
