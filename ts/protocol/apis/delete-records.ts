/**
 * DeleteRecords (key 21), v0-v2; v2+ flexible. The same fields in every version.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { deleteRecordsRequestCodec, type DeleteRecordsPartition, type DeleteRecordsTopic, type DeleteRecordsRequest } from '../messages/delete-records-request.js'
import { deleteRecordsResponseCodec, type DeleteRecordsPartitionResult, type DeleteRecordsTopicResult, type DeleteRecordsResponse } from '../messages/delete-records-response.js'
import { servedCodec } from './api.js'

export type { DeleteRecordsPartition, DeleteRecordsTopic, DeleteRecordsRequest, DeleteRecordsPartitionResult, DeleteRecordsTopicResult, DeleteRecordsResponse }

export const deleteRecordsCodec = servedCodec(deleteRecordsRequestCodec, deleteRecordsResponseCodec, 0, 2)
