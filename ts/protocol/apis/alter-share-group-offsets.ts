/**
 * AlterShareGroupOffsets (key 91, KIP-932), v0 as Kafka 4.4 serves it; flexible: sets share-partition start offsets of an empty share group. The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { alterShareGroupOffsetsRequestCodec, type AlterShareGroupOffsetsRequest } from '../messages/alter-share-group-offsets-request.js'
import { alterShareGroupOffsetsResponseCodec, type AlterShareGroupOffsetsResponse } from '../messages/alter-share-group-offsets-response.js'
import { servedCodec } from './api.js'

export type { AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse }

export const alterShareGroupOffsetsCodec = servedCodec(alterShareGroupOffsetsRequestCodec, alterShareGroupOffsetsResponseCodec, 0, 0)
