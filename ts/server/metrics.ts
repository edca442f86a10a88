/**
 * Broker metrics: a snapshot of the counters kept by the replica manager (delayed fetches and
 * produces, ISR changes), the fetch session cache, the socket server, the group coordinator and
 * the logs, rendered in
 * Prometheus's text format (version 0.0.4) and served on `GET /metrics` when the broker is given
 * `metrics.listen` (`--metrics-listen host:port`).
 *
 * Names follow Prometheus style with a `ferrolog_` prefix and Kafka's vocabulary: counters end in
 * `_total`, sizes in `_bytes`. Every state of a group is reported (0 when no group is in it), so
 * that a series does not vanish when its last group moves on.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FetchManager } from '../fetch/fetch-context.js'
import type { GroupCoordinatorService } from '../group/group-coordinator-service.js'
import { GroupState } from '../group/group-metadata.js'
import type { Logger } from '../logger.js'
import type { Transfer } from '../network/transfer.js'
import type { ReplicaManager } from '../replica/replica-manager.js'
import type { LogManager } from '../storage/log-manager.js'
import type { BrokerTopicStats } from './broker-topic-stats.js'

/** What the metrics read of a broker (the `Broker` has them; naming them here keeps broker.ts -> metrics.ts one way). */
export interface MetricsSource {
  readonly logger: Logger
  readonly logManager: LogManager
  readonly replicaManager: ReplicaManager
  readonly fetchManager: FetchManager
  readonly groupCoordinator: GroupCoordinatorService | null
  readonly brokerTopicStats: BrokerTopicStats
  readonly transfer: Transfer | null
  readonly connectionCount: number
  readonly queuedRequests: number
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
export const METRICS_PATH = '/metrics'
const PREFIX = 'ferrolog_'

export interface PartitionMetrics {
  topic: string
  partition: number
  logStartOffset: bigint
  logEndOffset: bigint
  highWatermark: bigint
  sizeBytes: number
  segments: number
}

export interface MetricsSnapshot {
  delayedFetch: ReturnType<ReplicaManager['delayedFetchStats']>
  delayedProduce: ReturnType<ReplicaManager['delayedProduceStats']>
  isr: ReturnType<ReplicaManager['isrStats']>
  /** All 0 until the Fetch handler has made its session manager. */
  fetchSessions: { sessions: number; partitionsCached: number; evictions: number; sessionsCreated: number }
  connections: number
  queuedRequests: number
  /** The zero-copy engine's jobs (all 0 in copy mode). */
  transfer: { jobs: number; failed: number; bytes: number; inline: number }
  /** Record bytes of Fetch responses: to consumers, to followers. */
  bytesOut: { consumers: number; replication: number }
  groups: Record<GroupState, number>
  partitions: PartitionMetrics[]
  /** The log cleaner's (Kafka's LogCleaner and LogCleanerManager metrics); null when it is off. */
  cleaner: CleanerMetrics | null
}

export interface CleanerMetrics {
  runs: number
  failures: number
  bytesRead: number
  bytesWritten: number
  recordsRead: number
  recordsRetained: number
  maxDirtyPercent: number
  maxBufferUtilizationPercent: number
  maxCompactionDelaySecs: number
  uncleanablePartitions: number
  timeSinceLastRunMs: number
}

/** Reads every counter once; cheap enough to call on each scrape. */
export function collectMetrics(broker: MetricsSource): MetricsSnapshot {
  const groups = Object.fromEntries(Object.values(GroupState).map((s) => [s, 0])) as Record<GroupState, number>
  for (const g of broker.groupCoordinator?.listGroups() ?? []) if (!broker.groupCoordinator?.consumerGroup(g.groupId)) groups[g.state as GroupState]++
  const partitions = broker.logManager.allLogs().map((log): PartitionMetrics => {
    const segments = log.segments()
    return {
      topic: log.topic,
      partition: log.partition,
      logStartOffset: log.logStartOffset(),
      logEndOffset: log.logEndOffset(),
      highWatermark: log.highWatermark(),
      sizeBytes: segments.reduce((sum, s) => sum + s.size, 0),
      segments: segments.length,
    }
  })
  partitions.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
  return {
    delayedFetch: broker.replicaManager.delayedFetchStats(),
    delayedProduce: broker.replicaManager.delayedProduceStats(),
    isr: broker.replicaManager.isrStats(),
    fetchSessions: broker.fetchManager.cache.metrics,
    connections: broker.connectionCount,
    queuedRequests: broker.queuedRequests,
    transfer: { ...(broker.transfer?.stats ?? { jobs: 0, failed: 0, bytes: 0, inline: 0 }) },
    bytesOut: { consumers: broker.brokerTopicStats.bytesOut, replication: broker.brokerTopicStats.replicationBytesOut },
    groups,
    partitions,
    cleaner: cleanerMetrics(broker),
  }
}

function cleanerMetrics(broker: MetricsSource): CleanerMetrics | null {
  const cleaner = broker.logManager.cleaner
  if (!cleaner) return null
  const s = cleaner.stats
  const pre = cleaner.manager.lastPreCleanStats
  return {
    runs: s.runs,
    failures: s.failures,
    bytesRead: s.bytesRead,
    bytesWritten: s.bytesWritten,
    recordsRead: s.recordsRead,
    recordsRetained: s.recordsRetained,
    maxDirtyPercent: Math.round(100 * pre.maxDirtyRatio),
    maxBufferUtilizationPercent: s.maxBufferUtilizationPercent,
    maxCompactionDelaySecs: Math.floor(pre.maxCompactionDelayMs / 1000),
    uncleanablePartitions: cleaner.manager.uncleanablePartitionsCount,
    timeSinceLastRunMs: Math.max(0, Date.now() - s.lastRunEndMs),
  }
}

type Labels = Record<string, string | number>
type Sample = [labels: Labels, value: number | bigint]

/** Escapes a label value: backslash, double quote and line feed, as the text format requires. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function family(out: string[], name: string, type: 'gauge' | 'counter', help: string, samples: Sample[]): void {
  const full = PREFIX + name
  out.push(`# HELP ${full} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${full} ${type}`)
  for (const [labels, value] of samples) {
    const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(String(v))}"`)
    out.push(`${full}${pairs.length ? `{${pairs.join(',')}}` : ''} ${value}`)
  }
}

/** The snapshot in Prometheus's text exposition format (version 0.0.4). */
export function renderPrometheus(m: MetricsSnapshot): string {
  const out: string[] = []
  const one = (value: number | bigint): Sample[] => [[{}, value]]
  const perPartition = (pick: (p: PartitionMetrics) => number | bigint): Sample[] => m.partitions.map((p) => [{ topic: p.topic, partition: p.partition }, pick(p)])
  const d = m.delayedFetch
  family(out, 'delayed_fetch_parked', 'gauge', 'Fetch requests waiting in the fetch purgatory.', one(d.parked))
  family(out, 'delayed_fetch_parked_total', 'counter', 'Fetch requests parked in the fetch purgatory.', one(d.parkedTotal))
  family(out, 'delayed_fetch_completed_total', 'counter', 'Delayed fetches completed (answered before or at expiry).', one(d.completed))
  family(out, 'delayed_fetch_expired_total', 'counter', 'Delayed fetches that reached their max wait.', one(d.expired))
  family(out, 'delayed_fetch_dropped_total', 'counter', 'Delayed fetches dropped unanswered (connection closed, shutdown).', one(d.dropped))
  family(out, 'delayed_fetch_consumer_expired_total', 'counter', 'Expired delayed fetches from consumers.', one(d.consumerExpired))
  family(out, 'delayed_fetch_follower_expired_total', 'counter', 'Expired delayed fetches from followers.', one(d.followerExpired))
  const dp = m.delayedProduce
  family(out, 'delayed_produce_parked', 'gauge', 'acks=all produces waiting in the produce purgatory for the ISR.', one(dp.parked))
  family(out, 'delayed_produce_parked_total', 'counter', 'acks=all produces parked in the produce purgatory.', one(dp.parkedTotal))
  family(out, 'delayed_produce_completed_total', 'counter', 'Delayed produces answered before their timeout.', one(dp.completed))
  family(out, 'delayed_produce_expired_total', 'counter', 'Delayed produces that reached their timeout (REQUEST_TIMED_OUT).', one(dp.expired))
  family(out, 'delayed_produce_dropped_total', 'counter', 'Delayed produces dropped unanswered (connection closed, shutdown).', one(dp.dropped))
  family(out, 'delayed_produce_expired_partitions_total', 'counter', 'Partitions of delayed produces whose acks did not come in time (DelayedProduceMetrics ExpiresPerSec).', one(dp.expiredPartitions))
  family(out, 'isr_expands_total', 'counter', 'ISR expansions recorded (IsrExpandsPerSec).', one(m.isr.expands))
  family(out, 'isr_shrinks_total', 'counter', 'ISR shrinks recorded (IsrShrinksPerSec).', one(m.isr.shrinks))
  family(out, 'isr_updates_failed_total', 'counter', 'ISR changes refused or failed (FailedIsrUpdatesPerSec).', one(m.isr.failed))
  family(out, 'under_min_isr_partitions', 'gauge', 'Partitions led here whose ISR is smaller than min.insync.replicas (UnderMinIsrPartitionCount).', one(m.isr.underMinIsrPartitions))
  const f = m.fetchSessions
  family(out, 'fetch_sessions', 'gauge', 'Incremental fetch sessions in the cache (NumIncrementalFetchSessions).', one(f.sessions))
  family(out, 'fetch_session_partitions_cached', 'gauge', 'Partitions held by cached fetch sessions (NumIncrementalFetchPartitionsCached).', one(f.partitionsCached))
  family(out, 'fetch_session_evictions_total', 'counter', 'Fetch sessions evicted from the cache (IncrementalFetchSessionEvictionsPerSec).', one(f.evictions))
  family(out, 'fetch_sessions_created_total', 'counter', 'Incremental fetch sessions created.', one(f.sessionsCreated))
  family(out, 'connections', 'gauge', 'Open client connections.', one(m.connections))
  family(out, 'queued_requests', 'gauge', 'Requests received and not yet fully answered on the wire (RequestQueueSize and ResponseQueueSize together).', one(m.queuedRequests))
  family(out, 'transfer_jobs_total', 'counter', 'Fetch responses sent by the zero-copy transfer engine.', one(m.transfer.jobs))
  family(out, 'transfer_failed_total', 'counter', 'Zero-copy transfers that failed (peer closed, cancelled, short file).', one(m.transfer.failed))
  family(out, 'transfer_bytes_total', 'counter', 'Bytes sent by the zero-copy transfer engine.', one(m.transfer.bytes))
  family(out, 'bytes_out_total', 'counter', "Record bytes sent in Fetch responses to consumers (Kafka's BytesOutPerSec).", one(m.bytesOut.consumers))
  family(out, 'replication_bytes_out_total', 'counter', "Record bytes sent in Fetch responses to follower replicas (Kafka's ReplicationBytesOutPerSec).", one(m.bytesOut.replication))
  family(out, 'transfer_inline_total', 'counter', 'Zero-copy transfers written at once on the event loop thread (small, cached, socket idle) instead of by the engine thread.', one(m.transfer.inline))
  family(
    out,
    'groups',
    'gauge',
    'Consumer groups by state.',
    Object.entries(m.groups).map(([state, n]) => [{ state }, n]),
  )
  family(
    out,
    'log_start_offset',
    'gauge',
    'First offset of the partition log.',
    perPartition((p) => p.logStartOffset),
  )
  family(
    out,
    'log_end_offset',
    'gauge',
    'Offset of the next record appended to the partition log.',
    perPartition((p) => p.logEndOffset),
  )
  family(
    out,
    'log_high_watermark',
    'gauge',
    'High watermark of the partition.',
    perPartition((p) => p.highWatermark),
  )
  family(
    out,
    'log_size_bytes',
    'gauge',
    'Bytes in the partition log segments.',
    perPartition((p) => p.sizeBytes),
  )
  family(
    out,
    'log_segments',
    'gauge',
    'Segments of the partition log.',
    perPartition((p) => p.segments),
  )
  const c = m.cleaner
  if (c) {
    family(out, 'log_cleaner_runs_total', 'counter', 'Log cleaner rounds that ended.', one(c.runs))
    family(out, 'log_cleaner_failures_total', 'counter', 'Log cleaner rounds that failed (their logs are uncleanable).', one(c.failures))
    family(out, 'log_cleaner_read_bytes_total', 'counter', 'Bytes of log the cleaner read.', one(c.bytesRead))
    family(out, 'log_cleaner_written_bytes_total', 'counter', 'Bytes of cleaned log the cleaner wrote.', one(c.bytesWritten))
    family(out, 'log_cleaner_records_read_total', 'counter', 'Records the cleaner read.', one(c.recordsRead))
    family(out, 'log_cleaner_records_retained_total', 'counter', 'Records the cleaner kept.', one(c.recordsRetained))
    family(out, 'log_cleaner_max_dirty_percent', 'gauge', 'The largest dirty ratio of the compacted logs at the last look, percent (max-dirty-percent).', one(c.maxDirtyPercent))
    family(
      out,
      'log_cleaner_max_buffer_utilization_percent',
      'gauge',
      'Offset map memory used by the last round, percent of its dedupe buffer (max-buffer-utilization-percent).',
      one(c.maxBufferUtilizationPercent),
    )
    family(out, 'log_cleaner_max_compaction_delay_secs', 'gauge', 'How far the most overdue log is past its max.compaction.lag.ms (max-compaction-delay-secs).', one(c.maxCompactionDelaySecs))
    family(out, 'log_cleaner_uncleanable_partitions', 'gauge', 'Logs the cleaner gave up on after an error (uncleanable-partitions-count).', one(c.uncleanablePartitions))
    family(out, 'log_cleaner_time_since_last_run_ms', 'gauge', 'Milliseconds since the last cleaner round ended (time-since-last-run-ms).', one(c.timeSinceLastRunMs))
  }
  return out.join('\n') + '\n'
}

/** The HTTP endpoint: `GET /metrics` only, on the given host. */
export class MetricsServer {
  private readonly server: Server

  constructor(
    private readonly broker: MetricsSource,
    private readonly host: string,
    private readonly port: number,
  ) {
    this.server = createServer((req, res) => this.handle(req, res))
  }

  /** Starts listening; the bound port (the configured one, or the one picked for port 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject)
        resolve((this.server.address() as AddressInfo).port)
      })
    })
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server.listening) return resolve()
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?', 1)[0]
    if (path !== METRICS_PATH) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return void res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed\n')
    }
    let body: string
    try {
      body = renderPrometheus(collectMetrics(this.broker))
    } catch (err) {
      this.broker.logger.error('metrics collection failed', { error: (err as Error).message })
      return void res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n')
    }
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) })
    res.end(req.method === 'HEAD' ? undefined : body)
  }
}
