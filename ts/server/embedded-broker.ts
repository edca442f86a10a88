/**
 * The broker as a library: `startBroker()` runs one in this process, on an ephemeral port and a
 * temporary data dir by default, silent unless given a logger, for tests and tools that need a
 * Kafka broker without a JVM or a container. Several in one process are fine: each has its own
 * port, data dir (and lock), timers and transfer engine, and none of them touches process-wide
 * state beyond raising the soft open-file limit (idempotent).
 *
 *   await using broker = await startBroker()
 *   const kafka = new Kafka({ brokers: [broker.bootstrapServers] })
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fromPinoLogger, silentLogger, type PinoLikeLogger } from '../logger.js'
import type { BackendName } from '../storage/backends.js'
import { Broker } from './broker.js'
import { brokerConfigFrom } from './config.js'

export interface StartBrokerOptions {
  /** The port to listen on; 0 (the default) picks a free one (`broker.port`, `broker.bootstrapServers`). */
  port?: number
  /** The address to listen on and advertise; default 127.0.0.1. */
  host?: string
  /**
   * Where the logs live. Default: a fresh temporary directory, removed when the broker stops.
   * A directory given here is kept (a later broker on it finds its topics and records).
   */
  dataDir?: string
  /**
   * Broker configs by Kafka's names, as in server.properties (`log.segment.bytes`,
   * `num.partitions`, `auto.create.topics.enable`, ...). `port`, `host` and `dataDir` override
   * `listeners` and `log.dirs`. `group.initial.rebalance.delay.ms` defaults to 0 here (Kafka's
   * test harnesses do the same): a consumer group's first generation does not wait 3 s.
   */
  config?: Record<string, string>
  /** Where the broker logs, in pino's call shape (`logger.info(fields, msg)`); default silent. */
  logger?: PinoLikeLogger
  /** The storage engine: 'native' (the Rust core, the default) or 'js' (the pure-TypeScript twin). */
  backend?: BackendName
}

/** Starts a broker in this process; `await broker.stop()` (or `await using`) stops it. */
export async function startBroker(options: StartBrokerOptions = {}): Promise<Broker> {
  const props: Record<string, string> = { 'group.initial.rebalance.delay.ms': '0', ...options.config }
  if (options.port !== undefined || options.host !== undefined || props['listeners'] === undefined) {
    props['listeners'] = `${options.host ?? '127.0.0.1'}:${options.port ?? 0}`
  }
  const ownDataDir = options.dataDir === undefined && props['log.dirs'] === undefined && props['log.dir'] === undefined
  if (options.dataDir !== undefined) props['log.dirs'] = options.dataDir
  const tempDir = ownDataDir ? await mkdtemp(join(tmpdir(), 'ferrolog-embedded-')) : null
  if (tempDir !== null) props['log.dirs'] = tempDir
  try {
    return await Broker.start(brokerConfigFrom(props), {
      backend: options.backend,
      logger: options.logger ? fromPinoLogger(options.logger) : silentLogger,
      removeDataDirOnStop: ownDataDir,
    })
  } catch (err) {
    if (tempDir !== null) await rm(tempDir, { recursive: true, force: true })
    throw err
  }
}
