/**
 * ShareGroupHeartbeat (key 76, KIP-932), v1 as Kafka 4.4 serves it (v0 was the early-access
 * version, no longer served); flexible. A member of a share group joins (epoch 0), heartbeats,
 * and leaves (-1) with it; the answer carries its epoch and its assignment. The codecs are
 * generated from Kafka's schemas (ts/protocol/messages).
 */
import { shareGroupHeartbeatRequestCodec, type ShareGroupHeartbeatRequest } from '../messages/share-group-heartbeat-request.js'
import { shareGroupHeartbeatResponseCodec, type ShareGroupHeartbeatResponse } from '../messages/share-group-heartbeat-response.js'
import { servedCodec } from './api.js'

export type { ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse }

export const shareGroupHeartbeatCodec = servedCodec(shareGroupHeartbeatRequestCodec, shareGroupHeartbeatResponseCodec, 1, 1)
