/**
 * Heartbeat (key 12), served v0-v4; v4+ flexible. A member learns of a rebalance from
 * REBALANCE_IN_PROGRESS here. The codecs are generated from Kafka's schemas (ts/protocol/messages).
 */
import { heartbeatRequestCodec, type HeartbeatRequest } from '../messages/heartbeat-request.js'
import { heartbeatResponseCodec, type HeartbeatResponse } from '../messages/heartbeat-response.js'
import { servedCodec } from './api.js'

export type { HeartbeatRequest, HeartbeatResponse }

export const heartbeatCodec = servedCodec(heartbeatRequestCodec, heartbeatResponseCodec, 0, 4)
