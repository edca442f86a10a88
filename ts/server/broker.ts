/**
 * The broker: a data directory (locked, one broker each), its logs and topics, the request
 * handlers and the socket server, wired together; `start` and a clean `stop`.
 */
import { mkdirSync } from 'node:fs'
import { GroupCoordinator } from '../group/group-coordinator.js'
import { OFFSETS_LOG_CONFIG, OFFSETS_TOPIC, OffsetStore } from '../group/offset-store.js'
import { createLogger, type Logger } from '../logger.js'
import { SocketServer } from '../network/socket-server.js'
import { Transfer } from '../network/transfer.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { ReplicaManager } from '../replica/replica-manager.js'
import { LogManager } from '../storage/log-manager.js'
import type { BackendName } from '../storage/backends.js'
import { ConfigError, topicLogConfig, type BrokerConfig } from './config.js'
import { registerHandlers } from './handlers/index.js'
import { DataDirLock } from './lock-file.js'
import { MetricsServer } from './metrics.js'
import { ProducerIdManager } from './producer-id-manager.js'
import { RequestHandler } from './request-handler.js'
import { TopicStore, type TopicInfo } from './topic-store.js'

/** Kafka's rule for topic names. */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/

export class TopicError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message)
  }
}

export interface BrokerOptions {
  backend?: BackendName
  logger?: Logger
}

export class Broker {
  readonly config: BrokerConfig
  readonly logger: Logger
  readonly topics: TopicStore
  readonly logManager: LogManager
  readonly replicaManager: ReplicaManager
  readonly requests: RequestHandler
  /** Consumer groups and committed offsets; created in `start`, before the port opens. */
  groupCoordinator!: GroupCoordinator
  readonly producerIds: ProducerIdManager
  private readonly server: SocketServer
  /** The zero-copy engine (its own thread) when config.transfer is zero-copy. */
  readonly transfer: Transfer | null
  private readonly lock: DataDirLock
  private readonly metricsServer: MetricsServer | null
  private boundPort = 0
  private boundMetricsPort = 0
  private stopping: Promise<void> | null = null

  private constructor(config: BrokerConfig, logger: Logger, lock: DataDirLock, topics: TopicStore, logManager: LogManager, producerIds: ProducerIdManager) {
    this.config = config
    this.producerIds = producerIds
    this.logger = logger
    this.lock = lock
    this.topics = topics
    this.logManager = logManager
    this.replicaManager = new ReplicaManager(logManager)
    this.requests = new RequestHandler(logger)
    registerHandlers(this)
    this.transfer = config.transfer === 'zero-copy' ? new Transfer() : null
    this.server = new SocketServer((frame, connection) => this.requests.handle(frame, connection), {
      host: config.host,
      port: config.port,
      maxRequestBytes: config.maxRequestBytes,
      connectionsMaxIdleMs: config.connectionsMaxIdleMs,
      logger,
      transfer: this.transfer,
    })
    this.metricsServer = config.metricsListen ? new MetricsServer(this, config.metricsListen.host, config.metricsListen.port) : null
  }

  static async start(config: BrokerConfig, options: BrokerOptions = {}): Promise<Broker> {
    const logger = options.logger ?? createLogger({ fields: { nodeId: config.nodeId } })
    mkdirSync(config.dataDir, { recursive: true })
    const lock = DataDirLock.acquire(config.dataDir)
    try {
      const topics = await TopicStore.load(config.dataDir)
      const logManager = await LogManager.open({
        dataDir: config.dataDir,
        backend: options.backend ?? 'native',
        defaultConfig: config.logDefaults,
        topicConfig: (topic) => (topic === OFFSETS_TOPIC ? OFFSETS_LOG_CONFIG : topicLogConfig(topics.get(topic)?.configs ?? {})),
        retentionCheckIntervalMs: config.retentionCheckIntervalMs,
        logger,
      })
      const producerIds = await ProducerIdManager.load(config.dataDir)
      const broker = new Broker(config, logger, lock, topics, logManager, producerIds)
      for (const topic of topics.all()) await broker.ensureLogs(topic)
      broker.groupCoordinator = new GroupCoordinator(
        await OffsetStore.open(logManager, logger),
        {
          initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
          minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
          maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
        },
        logger,
      )
      broker.boundPort = await broker.server.listen()
      if (broker.metricsServer) {
        try {
          broker.boundMetricsPort = await broker.metricsServer.listen()
        } catch (err) {
          await broker.stop()
          throw err
        }
      }
      logger.info('broker started', {
        listen: `${config.host}:${broker.boundPort}`,
        metrics: config.metricsListen ? `${config.metricsListen.host}:${broker.boundMetricsPort}` : 'off',
        dataDir: config.dataDir,
        topics: topics.all().length,
      })
      return broker
    } catch (err) {
      lock.release()
      throw err
    }
  }

  /** The port the broker listens on (the configured one, or the one picked for port 0). */
  get port(): number {
    return this.boundPort
  }

  /** The port of the metrics endpoint (the one picked for port 0); 0 when metrics are off. */
  get metricsPort(): number {
    return this.boundMetricsPort
  }

  /** Open client connections. */
  /** Requests received and not yet fully answered on the wire (each connection stops reading at MAX_QUEUED_REQUESTS). */
  get queuedRequests(): number {
    return this.server.queuedRequests
  }

  get connectionCount(): number {
    return this.server.connectionCount
  }

  get advertisedPort(): number {
    return this.config.advertisedPort === 0 ? this.boundPort : this.config.advertisedPort
  }

  /** Creates a topic and its logs; throws TopicError with Kafka's error code. */
  async createTopic(name: string, partitions: number, configs: Record<string, string>, validateOnly = false): Promise<TopicInfo | null> {
    if (!LEGAL_TOPIC.test(name) || name === '.' || name === '..') {
      throw new TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, `illegal topic name "${name}"`)
    }
    if (this.topics.get(name) || name === OFFSETS_TOPIC) throw new TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic ${name} already exists`)
    if (!Number.isInteger(partitions) || partitions < 1) throw new TopicError(ErrorCode.INVALID_PARTITIONS, `a topic needs at least one partition, not ${partitions}`)
    try {
      topicLogConfig(configs)
    } catch (err) {
      if (err instanceof ConfigError) throw new TopicError(ErrorCode.INVALID_CONFIG, err.message)
      throw err
    }
    if (validateOnly) return null
    const topic = await this.topics.create(name, partitions, configs)
    await this.ensureLogs(topic)
    this.logger.info('created topic', { topic: name, partitions, configs })
    return topic
  }

  async deleteTopic(name: string): Promise<void> {
    const topic = this.topics.get(name)
    if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
    await this.topics.delete(name)
    for (let p = 0; p < topic.partitions; p++) await this.logManager.deleteLog(name, p)
    this.logger.info('deleted topic', { topic: name })
  }

  async addPartitions(name: string, count: number): Promise<void> {
    const topic = this.topics.get(name)
    if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
    if (count <= topic.partitions) {
      throw new TopicError(ErrorCode.INVALID_PARTITIONS, `topic ${name} has ${topic.partitions} partitions; the new count must be larger, not ${count}`)
    }
    await this.topics.setPartitions(name, count)
    await this.ensureLogs(topic)
  }

  /** Stops accepting connections, closes the logs cleanly (checkpoints, clean marker), unlocks. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.info('broker stopping')
      // Held JoinGroup and SyncGroup answers go out (NOT_COORDINATOR) before the sockets close.
      this.groupCoordinator?.stop()
      await Promise.all([this.server.stop(), this.metricsServer?.stop()])
      this.transfer?.close()
      // Fetches still parked belong to connections just closed: dropped, not answered.
      this.replicaManager.shutdown()
      // A compaction of the offsets log under way finishes before its log closes.
      await this.groupCoordinator?.offsets.idle()
      await this.logManager.close()
      this.lock.release()
      this.logger.info('broker stopped')
    })()
    return this.stopping
  }

  private async ensureLogs(topic: TopicInfo): Promise<void> {
    for (let p = 0; p < topic.partitions; p++) {
      await this.logManager.getOrCreateLog(topic.name, p, { topicId: topic.topicId, config: topicLogConfig(topic.configs) })
    }
  }
}
