/**
 * AlterConfigs (key 33), served v0-v2; v2+ flexible. Replaces the whole set of dynamic configs of
 * each resource with the ones given (IncrementalAlterConfigs, key 44, changes them one by one). The
 * response shape is IncrementalAlterConfigs' too. The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names
 * the versions the broker serves.
 */
import { alterConfigsRequestCodec, type AlterConfigsRequest, type AlterConfigsResource, type AlterableConfig } from '../messages/alter-configs-request.js'
import { alterConfigsResponseCodec, type AlterConfigsResourceResponse, type AlterConfigsResponse } from '../messages/alter-configs-response.js'
import { servedCodec } from './api.js'

export type { AlterableConfig, AlterConfigsResource, AlterConfigsRequest, AlterConfigsResourceResponse, AlterConfigsResponse }

export const alterConfigsCodec = servedCodec(alterConfigsRequestCodec, alterConfigsResponseCodec, 0, 2)
