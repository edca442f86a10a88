/**
 * OffsetDelete (key 47), v0 only; never flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { offsetDeleteRequestCodec, type OffsetDeleteRequestTopic, type OffsetDeleteRequest } from '../messages/offset-delete-request.js'
import { offsetDeleteResponseCodec, type OffsetDeleteResponsePartition, type OffsetDeleteResponseTopic, type OffsetDeleteResponse } from '../messages/offset-delete-response.js'
import { servedCodec } from './api.js'

export type { OffsetDeleteRequestTopic, OffsetDeleteRequest, OffsetDeleteResponsePartition, OffsetDeleteResponseTopic, OffsetDeleteResponse }

export const offsetDeleteCodec = servedCodec(offsetDeleteRequestCodec, offsetDeleteResponseCodec, 0, 0)
