/**
 * JoinGroup (key 11), served v0-v9; v6+ flexible. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 *
 * A response's protocolName is nullable from v7 only: before, a null (an error response) goes on
 * the wire as "", as Kafka's JoinGroupResponse does.
 */
import { joinGroupRequestCodec, type JoinGroupRequest, type JoinGroupRequestProtocol } from '../messages/join-group-request.js'
import { joinGroupResponseCodec, type JoinGroupResponse, type JoinGroupResponseMember } from '../messages/join-group-response.js'
import { servedCodec, type ApiCodec } from './api.js'

export type { JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse, JoinGroupResponseMember }

/** The first version whose response may carry a null protocolName. */
const NULL_PROTOCOL_NAME_FROM = 7

const served = servedCodec(joinGroupRequestCodec, joinGroupResponseCodec, 0, 9)

export const joinGroupCodec: ApiCodec<JoinGroupRequest, JoinGroupResponse> = {
  ...served,
  encodeResponse(w, version, response) {
    const wire = version < NULL_PROTOCOL_NAME_FROM && response.protocolName === null ? { ...response, protocolName: '' } : response
    served.encodeResponse(w, version, wire)
  },
}
