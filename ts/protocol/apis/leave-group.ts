/**
 * LeaveGroup (key 13), served v0-v5; v4+ flexible. Up to v2 one member leaves (memberId); from v3
 * a batch of members does (KIP-345), each with its outcome, so a handler answers in the shape of
 * the version asked. The codecs are generated from Kafka's schemas (ts/protocol/messages); this
 * module names the versions the broker serves.
 */
import { leaveGroupRequestCodec, type LeaveGroupRequest, type MemberIdentity } from '../messages/leave-group-request.js'
import { leaveGroupResponseCodec, type LeaveGroupResponse, type MemberResponse } from '../messages/leave-group-response.js'
import { servedCodec } from './api.js'

export type { LeaveGroupRequest, MemberIdentity, LeaveGroupResponse, MemberResponse }

export const leaveGroupCodec = servedCodec(leaveGroupRequestCodec, leaveGroupResponseCodec, 0, 5)
