/**
 * ReadShareGroupStateSummary (key 87, KIP-932), v0-v1 as Kafka 4.4 serves it; flexible. An inter-broker request to the
 * share coordinator (ts/coordinator/share/share-coordinator.ts): the start offset and delivery-complete count of a share partition (offsets and lag of a share group). The codecs are generated
 * from Kafka's schemas (ts/protocol/messages).
 */
import { readShareGroupStateSummaryRequestCodec, type ReadShareGroupStateSummaryRequest } from '../messages/read-share-group-state-summary-request.js'
import { readShareGroupStateSummaryResponseCodec, type ReadShareGroupStateSummaryResponse } from '../messages/read-share-group-state-summary-response.js'
import { servedCodec } from './api.js'

export type { ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse }

export const readShareGroupStateSummaryCodec = servedCodec(readShareGroupStateSummaryRequestCodec, readShareGroupStateSummaryResponseCodec, 0, 1)
