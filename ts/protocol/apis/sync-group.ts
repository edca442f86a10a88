/**
 * SyncGroup (key 14), v0-v5; v4+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { syncGroupRequestCodec, type SyncGroupRequestAssignment, type SyncGroupRequest } from '../messages/sync-group-request.js'
import { syncGroupResponseCodec, type SyncGroupResponse } from '../messages/sync-group-response.js'
import { servedCodec } from './api.js'

export type { SyncGroupRequestAssignment, SyncGroupRequest, SyncGroupResponse }

export const syncGroupCodec = servedCodec(syncGroupRequestCodec, syncGroupResponseCodec, 0, 5)
