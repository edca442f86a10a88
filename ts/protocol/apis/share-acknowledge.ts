/**
 * ShareAcknowledge (key 79, KIP-932), v1-v2 as Kafka 4.4 serves them; flexible. A share group
 * member acknowledges (accept, release, reject, renew) records it acquired, within its share
 * session; epoch -1 closes the session. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages).
 */
import { shareAcknowledgeRequestCodec, type ShareAcknowledgeRequest } from '../messages/share-acknowledge-request.js'
import { shareAcknowledgeResponseCodec, type ShareAcknowledgeResponse } from '../messages/share-acknowledge-response.js'
import { servedCodec } from './api.js'

export type { ShareAcknowledgeRequest, ShareAcknowledgeResponse }

export const shareAcknowledgeCodec = servedCodec(shareAcknowledgeRequestCodec, shareAcknowledgeResponseCodec, 1, 2)
