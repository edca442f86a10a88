/**
 * DeleteAcls (key 31), v1-v3; v2+ flexible (v0 left Kafka in 4.0).
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { deleteAclsRequestCodec, type DeleteAclsRequest } from '../messages/delete-acls-request.js'
import { deleteAclsResponseCodec, type DeleteAclsResponse } from '../messages/delete-acls-response.js'
import { servedCodec } from './api.js'

export type { DeleteAclsRequest, DeleteAclsResponse }

export const deleteAclsCodec = servedCodec(deleteAclsRequestCodec, deleteAclsResponseCodec, 1, 3)
