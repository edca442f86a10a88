/**
 * The broker as a library: `startBroker()` runs one in this process, on an ephemeral port and a
 * temporary data dir by default, silent unless given a logger, for tests and tools that need a
 * Kafka broker without a JVM or a container. Several in one process are fine: each has its own
 * port, data dir (and lock), timers and transfer engine, and none of them touches process-wide
 * state beyond raising the soft open-file limit (idempotent).
 *
 *   await using broker = await startBroker()
 *   const kafka = new Kafka({ brokers: [broker.bootstrapServers] })
 *
 * With `security`, a TLS and/or SASL listener with its users, certificates and ACLs, and each
 * user's client settings (embedded-security.ts):
 *
 *   await using broker = await startBroker({ security: { protocol: 'SASL_SSL', users: { alice: 'secret' } } })
 *   const kafka = new Kafka(broker.security.clientSettings('alice').kafkajs)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fromPinoLogger, silentLogger, type PinoLikeLogger } from '../logger.js'
import type { BackendName } from '../storage/backends.js'
import { Broker } from './broker.js'
import { brokerConfigFrom } from './config.js'
import { prepareSecurity, type EmbeddedSecurityOptions, type SecuredBroker } from './embedded-security.js'

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
  /**
   * A secured listener in one call: its protocol (SSL, SASL_PLAINTEXT, SASL_SSL), SASL mechanisms,
   * users, super users and ACLs, and a throw-away CA and certificate unless `ca` is given. The
   * broker then has `security.clientSettings(user)`: the settings of kafkajs, @platformatic/kafka,
   * ferrolog's Consumer and Kafka's Java clients (embedded-security.ts).
   */
  security?: EmbeddedSecurityOptions
  /**
   * Allows `broker.inject(rule)` and `broker.clearInjections()`: chosen requests answered with a
   * Kafka error, late, held, or their connection closed, for tests of clients' retries
   * (fault-injector.ts). Off by default; only this API turns it on (no config key does).
   */
  faultInjection?: boolean
}

/** Starts a broker in this process; `await broker.stop()` (or `await using`) stops it. */
export async function startBroker(options: StartBrokerOptions & { security: EmbeddedSecurityOptions }): Promise<SecuredBroker>
export async function startBroker(options?: StartBrokerOptions): Promise<Broker>
export async function startBroker(options: StartBrokerOptions = {}): Promise<Broker> {
  const host = options.host ?? '127.0.0.1'
  const listenerPrefix = options.security ? `${options.security.protocol}://` : ''
  const userListeners = options.config?.['listeners']
  const listeners = options.port !== undefined || options.host !== undefined || userListeners === undefined ? `${listenerPrefix}${host}:${options.port ?? 0}` : userListeners
  const security = options.security ? prepareSecurity(options.security, listeners, host) : null
  // Kafka's names, the caller's config winning over what `security` makes.
  const props: Record<string, string> = { 'group.initial.rebalance.delay.ms': '0', ...security?.configs, ...options.config, listeners }
  const ownDataDir = options.dataDir === undefined && props['log.dirs'] === undefined && props['log.dir'] === undefined
  if (options.dataDir !== undefined) props['log.dirs'] = options.dataDir
  const tempDir = ownDataDir ? await mkdtemp(join(tmpdir(), 'ferrolog-embedded-')) : null
  if (tempDir !== null) props['log.dirs'] = tempDir
  let broker: Broker
  try {
    broker = await Broker.start(brokerConfigFrom(props), {
      backend: options.backend,
      logger: options.logger ? fromPinoLogger(options.logger) : silentLogger,
      removeDataDirOnStop: ownDataDir,
      faultInjection: options.faultInjection === true,
    })
  } catch (err) {
    if (tempDir !== null) await rm(tempDir, { recursive: true, force: true })
    throw err
  }
  if (!security) return broker
  try {
    // Users and ACLs are stored before the caller gets the broker (until then, a client that
    // found the port is refused, never let in: no credential, and no ACL allows nothing).
    return Object.assign(broker, { security: await security.apply(broker) })
  } catch (err) {
    await broker.stop().catch(() => undefined)
    throw err
  }
}
