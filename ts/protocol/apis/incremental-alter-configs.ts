/**
 * IncrementalAlterConfigs (key 44, KIP-339), served v0-v1; v1+ flexible. Each config of a
 * resource is changed by its own operation; the others keep their values. The codecs are
 * generated from Kafka's schemas (ts/protocol/messages); this module names the versions the
 * broker serves.
 *
 * configOperation: SET 0, DELETE 1 (back to the default), APPEND 2 and SUBTRACT 3 (list-typed
 * configs only).
 */
import { incrementalAlterConfigsRequestCodec, type AlterConfigsResource, type AlterableConfig, type IncrementalAlterConfigsRequest } from '../messages/incremental-alter-configs-request.js'
import { incrementalAlterConfigsResponseCodec, type IncrementalAlterConfigsResponse } from '../messages/incremental-alter-configs-response.js'
import { servedCodec } from './api.js'

export type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse }
/** One config change (Kafka's AlterableConfig of this request). */
export type IncrementalAlterableConfig = AlterableConfig
/** One resource's changes (Kafka's AlterConfigsResource of this request). */
export type IncrementalAlterConfigsResource = AlterConfigsResource

/** Kafka's AlterConfigOp.OpType codes. */
export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const

export const incrementalAlterConfigsCodec = servedCodec(incrementalAlterConfigsRequestCodec, incrementalAlterConfigsResponseCodec, 0, 1)
