/**
 * DeleteGroups (key 42), v0-v3; v2+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { deleteGroupsRequestCodec, type DeleteGroupsRequest } from '../messages/delete-groups-request.js'
import { deleteGroupsResponseCodec, type DeletableGroupResult, type DeleteGroupsResponse } from '../messages/delete-groups-response.js'
import { servedCodec } from './api.js'

export type { DeleteGroupsRequest, DeletableGroupResult, DeleteGroupsResponse }

export const deleteGroupsCodec = servedCodec(deleteGroupsRequestCodec, deleteGroupsResponseCodec, 0, 3)
