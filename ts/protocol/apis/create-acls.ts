/**
 * CreateAcls (key 30), v1-v3; v2+ flexible (v0 left Kafka in 4.0).
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { createAclsRequestCodec, type CreateAclsRequest } from '../messages/create-acls-request.js'
import { createAclsResponseCodec, type CreateAclsResponse } from '../messages/create-acls-response.js'
import { servedCodec } from './api.js'

export type { CreateAclsRequest, CreateAclsResponse }

export const createAclsCodec = servedCodec(createAclsRequestCodec, createAclsResponseCodec, 1, 3)
