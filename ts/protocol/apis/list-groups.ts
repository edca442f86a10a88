/**
 * ListGroups (key 16), v0-v5; v3+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { listGroupsRequestCodec, type ListGroupsRequest } from '../messages/list-groups-request.js'
import { listGroupsResponseCodec, type ListedGroup, type ListGroupsResponse } from '../messages/list-groups-response.js'
import { servedCodec } from './api.js'

export type { ListGroupsRequest, ListedGroup, ListGroupsResponse }

export const listGroupsCodec = servedCodec(listGroupsRequestCodec, listGroupsResponseCodec, 0, 5)
