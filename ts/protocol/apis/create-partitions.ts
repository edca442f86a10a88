/**
 * CreatePartitions (key 37), v0-v3; v2+ flexible. The same fields in every version.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { createPartitionsRequestCodec, type CreatePartitionsAssignment, type CreatePartitionsTopic, type CreatePartitionsRequest } from '../messages/create-partitions-request.js'
import { createPartitionsResponseCodec, type CreatePartitionsTopicResult, type CreatePartitionsResponse } from '../messages/create-partitions-response.js'
import { servedCodec } from './api.js'

export type { CreatePartitionsAssignment, CreatePartitionsTopic, CreatePartitionsRequest, CreatePartitionsTopicResult, CreatePartitionsResponse }

export const createPartitionsCodec = servedCodec(createPartitionsRequestCodec, createPartitionsResponseCodec, 0, 3)
