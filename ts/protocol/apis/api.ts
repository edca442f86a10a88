/**
 * One codec per ApiKey, covering every version the broker serves, fields gated by version. A
 * codec reads and writes both requests and responses, so that the broker decodes requests and
 * encodes responses, and tests (and a future follower fetcher) do the reverse.
 *
 * Flexible versions (KIP-482) use compact strings, arrays and bytes and end every structure
 * with tagged fields; their requests carry header v2 and their responses header v1, except
 * ApiVersions, whose response header is always v0 (a client must read it before it knows what
 * the broker supports).
 */
import type { MessageCodec } from '../message-codec.js'
import type { Reader } from '../reader.js'
import type { Writer } from '../writer.js'
import { checkVersion } from './common.js'

/**
 * Records a broker holds outside the heap, written after the response's bytes by whoever sends
 * it (a range of a segment file: ts/network/transfer.ts's FileRecords).
 */
export interface RecordsRef {
  readonly sizeInBytes: number
}

/** Where one records field goes in the bytes `encodeResponseCuts` wrote. */
export interface RecordsCut<R> {
  /** Offset in the written bytes at which the records belong (right after their length prefix). */
  at: number
  records: R
  size: number
}

export interface ApiCodec<Req, Res> {
  readonly apiKey: number
  readonly name: string
  /** The versions the broker serves and advertises in ApiVersions. */
  readonly minVersion: number
  readonly maxVersion: number
  /** The first flexible version, or Infinity when none is. */
  readonly flexibleFrom: number
  decodeRequest(r: Reader, version: number): Req
  encodeRequest(w: Writer, version: number, request: Req): void
  decodeResponse(r: Reader, version: number): Res
  encodeResponse(w: Writer, version: number, response: Res): void
  /**
   * For responses that may hold records outside the heap (Fetch): writes all but those and
   * returns where they go, for a sender that writes them from their files.
   */
  encodeResponseCuts?(w: Writer, version: number, response: Res): RecordsCut<RecordsRef>[]
}

/** Kafka's ApiKeys, as numbered in the protocol. */
export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  SaslHandshake: 17,
  ApiVersions: 18,
  CreateTopics: 19,
  DeleteTopics: 20,
  DeleteRecords: 21,
  InitProducerId: 22,
  OffsetForLeaderEpoch: 23,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  WriteTxnMarkers: 27,
  TxnOffsetCommit: 28,
  DescribeAcls: 29,
  CreateAcls: 30,
  DeleteAcls: 31,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  DescribeLogDirs: 35,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  DeleteGroups: 42,
  IncrementalAlterConfigs: 44,
  AlterPartitionReassignments: 45,
  ListPartitionReassignments: 46,
  OffsetDelete: 47,
  DescribeClientQuotas: 48,
  DescribeUserScramCredentials: 50,
  AlterUserScramCredentials: 51,
  DescribeCluster: 60,
  DescribeProducers: 61,
  DescribeTransactions: 65,
  ListTransactions: 66,
  ConsumerGroupHeartbeat: 68,
  ConsumerGroupDescribe: 69,
  ShareGroupHeartbeat: 76,
  ShareGroupDescribe: 77,
  ShareFetch: 78,
  ShareAcknowledge: 79,
  InitializeShareGroupState: 83,
  ReadShareGroupState: 84,
  WriteShareGroupState: 85,
  DeleteShareGroupState: 86,
  ReadShareGroupStateSummary: 87,
  DescribeShareGroupOffsets: 90,
  AlterShareGroupOffsets: 91,
  DeleteShareGroupOffsets: 92,
} as const

export type ApiKeyName = keyof typeof ApiKey

/**
 * The codec of an ApiKey the broker serves, from the generated codecs of its request and response
 * (ts/protocol/messages): the versions served are `minVersion`-`maxVersion`, a subset of those the
 * codecs know; a version outside them is refused on either side (a ProtocolError), as a broker
 * that does not serve it would.
 */
export function servedCodec<Req, Res>(request: MessageCodec<Req>, response: MessageCodec<Res>, minVersion: number, maxVersion: number): ApiCodec<Req, Res> {
  const name = request.name.replace(/Request$/, '')
  if (minVersion < request.lowestVersion || maxVersion > request.highestVersion) {
    throw new Error(`${name}: serving v${minVersion}-v${maxVersion}, but the codecs know v${request.lowestVersion}-v${request.highestVersion}`)
  }
  const served = (version: number): void => checkVersion(name, version, minVersion, maxVersion)
  return {
    apiKey: request.apiKey,
    name,
    minVersion,
    maxVersion,
    flexibleFrom: request.flexibleFrom,
    decodeRequest(r, version) {
      served(version)
      return request.read(r, version)
    },
    encodeRequest(w, version, value) {
      served(version)
      request.write(w, version, value)
    },
    decodeResponse(r, version) {
      served(version)
      return response.read(r, version)
    },
    encodeResponse(w, version, value) {
      served(version)
      response.write(w, version, value)
    },
  }
}
