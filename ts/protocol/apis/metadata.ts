/**
 * Metadata (key 3), served v0-v12; v9+ flexible. In v0 an empty topics array asks for all topics;
 * from v1 that is a null array and an empty one asks for none. From v10 a topic may be asked for
 * by id (a null name), and from v12 an unknown one is answered with a null name. v13 (a top-level
 * errorCode, KIP-1102) is not served: its field stays 0 and is not on the wire. The codecs are
 * generated from Kafka's schemas (ts/protocol/messages); this module names the versions the
 * broker serves.
 */
import { metadataRequestCodec, type MetadataRequest, type MetadataRequestTopic } from '../messages/metadata-request.js'
import { metadataResponseCodec, type MetadataResponse, type MetadataResponseBroker, type MetadataResponsePartition, type MetadataResponseTopic } from '../messages/metadata-response.js'
import { servedCodec } from './api.js'

export type { MetadataRequest, MetadataRequestTopic, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic }

export const metadataCodec = servedCodec(metadataRequestCodec, metadataResponseCodec, 0, 12)

/** The "authorized operations were not requested" value of the two bitfields (Kafka's default). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648
