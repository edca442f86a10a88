/**
 * DescribeLogDirs: the broker's one log directory (its data dir, as an absolute path) with the
 * size of each partition's segments, its lag (LEO - high watermark) and, from v4, the file
 * system's total and usable bytes. Topics or partitions asked for that this broker does not
 * host are left out, as Kafka does; a null topic list means every partition.
 */
import { statfs } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { DescribeLogDirsRequest, DescribeLogDirsResponse, DescribeLogDirsTopic } from '../../protocol/apis/describe-log-dirs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Log } from '../../storage/log.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation } from '../../security/authorizer/acl.js'

export function describeLogDirsHandler(broker: BrokerContext): ApiHandler<DescribeLogDirsRequest, DescribeLogDirsResponse> {
  const size = (log: Log): bigint => log.segments().reduce((sum, s) => sum + BigInt(s.size), 0n)

  return async (request, context) => {
    // Kafka's: DESCRIBE on the cluster.
    if (!broker.auth.authorizeCluster(context, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] }
    const logDir = resolve(broker.config.dataDir)
    const wanted = request.topics === null ? null : new Map(request.topics.map((t) => [t.topic, new Set(t.partitions)]))
    const byTopic = new Map<string, DescribeLogDirsTopic>()
    for (const log of broker.logManager.allLogs()) {
      if (log.isClosed) continue
      if (wanted !== null && !wanted.get(log.topic)?.has(log.partition)) continue
      let topic = byTopic.get(log.topic)
      if (!topic) byTopic.set(log.topic, (topic = { name: log.topic, partitions: [] }))
      topic.partitions.push({ partitionIndex: log.partition, partitionSize: size(log), offsetLag: log.logEndOffset() - log.highWatermark(), isFutureKey: false })
    }
    const topics = [...byTopic.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const t of topics) t.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex)
    let totalBytes = -1n
    let usableBytes = -1n
    try {
      const fs = await statfs(logDir, { bigint: true })
      totalBytes = fs.blocks * fs.bsize
      usableBytes = fs.bavail * fs.bsize
    } catch {
      // Unknown (-1), as the field's default says.
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results: [{ errorCode: ErrorCode.NONE, logDir, topics, totalBytes, usableBytes, isCordoned: false }] }
  }
}
