/**
 * DescribeLogDirs (key 35), v1-v4 (v0 went with Kafka 4.0, KIP-896); v2+ flexible.
 *
 *   request  topics (nullable: all) [topic, partitions []int32]
 *   response throttleTimeMs, errorCode v3+,
 *            results [errorCode, logDir,
 *                     topics [name, partitions [partitionIndex, partitionSize int64,
 *                                               offsetLag int64, isFutureKey]],
 *                     totalBytes v4+ int64, usableBytes v4+ int64]
 *
 * totalBytes and usableBytes are ignorable (-1 when unknown); the top-level errorCode is not,
 * so encoding a non-zero one before v3 throws.
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 2

export interface DescribableLogDirTopic {
  topic: string
  partitions: number[]
}

export interface DescribeLogDirsRequest {
  /** Null for every topic. */
  topics: DescribableLogDirTopic[] | null
}

export interface DescribeLogDirsPartition {
  partitionIndex: number
  partitionSize: bigint
  offsetLag: bigint
  isFutureKey: boolean
}

export interface DescribeLogDirsTopic {
  name: string
  partitions: DescribeLogDirsPartition[]
}

export interface DescribeLogDirsResult {
  errorCode: number
  logDir: string
  topics: DescribeLogDirsTopic[]
  /** v4+; -1 before. */
  totalBytes: bigint
  /** v4+; -1 before. */
  usableBytes: bigint
}

export interface DescribeLogDirsResponse {
  throttleTimeMs: number
  /** v3+; 0 before. */
  errorCode: number
  results: DescribeLogDirsResult[]
}

export const describeLogDirsCodec: ApiCodec<DescribeLogDirsRequest, DescribeLogDirsResponse> = {
  apiKey: ApiKey.DescribeLogDirs,
  name: 'DescribeLogDirs',
  minVersion: 1,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const topics = r.flexNullableStructArray(flexible, (r): DescribableLogDirTopic => ({
      topic: r.flexString(flexible),
      partitions: r.flexInt32Array(flexible),
    }))
    r.endStruct(flexible)
    return { topics }
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexNullableStructArray(flexible, request.topics, (w, t) => {
      w.flexString(flexible, t.topic).flexInt32Array(flexible, t.partitions)
    })
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const errorCode = version >= 3 ? r.int16() : 0
    const results = r.flexStructArray(flexible, (r): DescribeLogDirsResult => ({
      errorCode: r.int16(),
      logDir: r.flexString(flexible),
      topics: r.flexStructArray(flexible, (r): DescribeLogDirsTopic => ({
        name: r.flexString(flexible),
        partitions: r.flexStructArray(flexible, (r): DescribeLogDirsPartition => ({
          partitionIndex: r.int32(),
          partitionSize: r.int64(),
          offsetLag: r.int64(),
          isFutureKey: r.bool(),
        })),
      })),
      totalBytes: version >= 4 ? r.int64() : -1n,
      usableBytes: version >= 4 ? r.int64() : -1n,
    }))
    r.endStruct(flexible)
    return { throttleTimeMs, errorCode, results }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    if (version >= 3) w.int16(response.errorCode)
    else if (response.errorCode !== 0) cannotCarry('DescribeLogDirs', version, 'a top-level errorCode')
    w.flexStructArray(flexible, response.results, (w, result) => {
      w.int16(result.errorCode).flexString(flexible, result.logDir)
      w.flexStructArray(flexible, result.topics, (w, t) => {
        w.flexString(flexible, t.name)
        w.flexStructArray(flexible, t.partitions, (w, p) => {
          w.int32(p.partitionIndex).int64(p.partitionSize).int64(p.offsetLag).bool(p.isFutureKey)
        })
      })
      if (version >= 4) w.int64(result.totalBytes).int64(result.usableBytes)
    })
    w.endStruct(flexible)
  },
}
