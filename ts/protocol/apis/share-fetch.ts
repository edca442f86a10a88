/**
 * ShareFetch (key 78, KIP-932), v1-v2 as Kafka 4.4 serves them (v0 was the early-access version,
 * no longer served); flexible. A share group member acquires records of the partitions it reads,
 * within a share session, and may acknowledge records it holds in the same request. v2 adds the
 * acquire mode and renew acknowledgements (KIP-1222). The codecs are generated from Kafka's
 * schemas (ts/protocol/messages); the response's records are Buffers.
 */
import { shareFetchRequestCodec, type ShareFetchRequest } from '../messages/share-fetch-request.js'
import { shareFetchResponseCodec, type ShareFetchResponse } from '../messages/share-fetch-response.js'
import { servedCodec } from './api.js'

export type { ShareFetchRequest, ShareFetchResponse }

export const shareFetchCodec = servedCodec(shareFetchRequestCodec, shareFetchResponseCodec, 1, 2)
