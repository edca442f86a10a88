/**
 * Broker and topic settings with Kafka's names. The broker reads `key=value` lines (a Kafka
 * server.properties subset) and command-line options; topics carry Kafka's topic-level configs
 * (segment.bytes, retention.ms, ...), which map onto the storage engine's LogConfig.
 *
 * Every key, with its type, validator and default, is declared once in ts/config/
 * (topic-configs.ts, broker-configs.ts); this module reads settings through those tables.
 */
import { readFileSync } from 'node:fs'
import { loadNative } from '../native/binding.js'
import { resolveListeners } from './listeners.js'
import { ConfigError } from '../config/config-def.js'
import { parseJavaProperties } from '../config/java-properties.js'
import { BROKER_CONFIG_KEYS, DEFAULT_CLEANER_CONFIG, type BrokerConfig, type BrokerConfigKey, type TransferMode } from '../config/broker-configs.js'
import { DEFAULT_LOG_CONFIG, DEFAULT_MIN_INSYNC_REPLICAS, LEGACY_TOPIC_CONFIG_NAMES, LOG_CONFIG_KEYS, OTHER_TOPIC_CONFIG_KEYS, type LogConfig } from '../config/topic-configs.js'

export { ConfigError } from '../config/config-def.js'
export { DEFAULT_MIN_INSYNC_REPLICAS } from '../config/topic-configs.js'
export { REPLICA_SELECTOR_CLASSES, type BrokerConfig, type ClusterSettings, type ReplicaSelectorName, type TransferMode } from '../config/broker-configs.js'

/** Zero-copy on Linux when the native binding loads (it is the sendfile engine), else copy. */
export function defaultTransferMode(): TransferMode {
  return process.platform === 'linux' && loadNative() !== null ? 'zero-copy' : 'copy'
}

/**
 * The most partitions one CreateTopics (all its topics together) or one CreatePartitions of a
 * topic may add: Kafka's controller refuses more (ReplicationControlManager's
 * MAX_PARTITIONS_PER_BATCH) with POLICY_VIOLATION and this message, before touching anything.
 */
export const MAX_PARTITIONS_PER_REQUEST = 10_000
export const EXCESSIVE_PARTITIONS = 'Excessively large number of partitions per request.'

/** Topic-level config name -> the LogConfig field it sets. */
const LOG_FIELD_OF = new Map(Object.entries(LOG_CONFIG_KEYS).map(([field, k]) => [k.name, { field: field as keyof LogConfig, key: k }]))
const OTHER_TOPIC_KEY_OF = new Map(OTHER_TOPIC_CONFIG_KEYS.map((k) => [k.name, k]))

/**
 * Kafka's `LogConfig.validateValues`: min.compaction.lag.ms may not exceed max.compaction.lag.ms
 * (each the topic's own value, else the broker's default).
 */
function checkCompactionLags(config: Pick<LogConfig, 'minCompactionLagMs' | 'maxCompactionLagMs'>): void {
  if (config.minCompactionLagMs > config.maxCompactionLagMs) {
    throw new ConfigError(`conflict topic config setting min.compaction.lag.ms (${config.minCompactionLagMs}) > max.compaction.lag.ms (${config.maxCompactionLagMs})`)
  }
}

/**
 * Kafka's `GroupCoordinatorConfig` checks of the consumer group protocol's settings, in its order
 * and with its messages: each range's max not below its min, the broker's session timeout and
 * heartbeat interval within their ranges, and the heartbeat more frequent than the session.
 */
function checkConsumerGroupConfigs(config: BrokerConfig): void {
  checkGroupProtocolConfigs('consumer', [
    config.groupConsumerSessionTimeoutMs,
    config.groupConsumerMinSessionTimeoutMs,
    config.groupConsumerMaxSessionTimeoutMs,
    config.groupConsumerHeartbeatIntervalMs,
    config.groupConsumerMinHeartbeatIntervalMs,
    config.groupConsumerMaxHeartbeatIntervalMs,
  ])
  // The share group protocol's, the same checks (Kafka's GroupCoordinatorConfig, group.share.*).
  checkGroupProtocolConfigs('share', [
    config.groupShareSessionTimeoutMs,
    config.groupShareMinSessionTimeoutMs,
    config.groupShareMaxSessionTimeoutMs,
    config.groupShareHeartbeatIntervalMs,
    config.groupShareMinHeartbeatIntervalMs,
    config.groupShareMaxHeartbeatIntervalMs,
  ])
}

/** One protocol's checks: its session, min and max session, heartbeat, min and max heartbeat settings. */
function checkGroupProtocolConfigs(protocol: 'consumer' | 'share', values: readonly number[]): void {
  const [s, sMin, sMax, h, hMin, hMax] = values as [number, number, number, number, number, number]
  const session = [`group.${protocol}.session.timeout.ms`, s] as const
  const minSession = [`group.${protocol}.min.session.timeout.ms`, sMin] as const
  const maxSession = [`group.${protocol}.max.session.timeout.ms`, sMax] as const
  const heartbeat = [`group.${protocol}.heartbeat.interval.ms`, h] as const
  const minHeartbeat = [`group.${protocol}.min.heartbeat.interval.ms`, hMin] as const
  const maxHeartbeat = [`group.${protocol}.max.heartbeat.interval.ms`, hMax] as const
  type Setting = readonly [string, number]
  const atLeast = (a: Setting, b: Setting) => {
    if (a[1] < b[1]) throw new ConfigError(`${a[0]} must be greater than or equal to ${b[0]}`)
  }
  const atMost = (a: Setting, b: Setting) => {
    if (a[1] > b[1]) throw new ConfigError(`${a[0]} must be less than or equal to ${b[0]}`)
  }
  atLeast(maxHeartbeat, minHeartbeat)
  atLeast(heartbeat, minHeartbeat)
  atMost(heartbeat, maxHeartbeat)
  atLeast(maxSession, minSession)
  atLeast(session, minSession)
  atMost(session, maxSession)
  if (heartbeat[1] >= session[1]) throw new ConfigError(`${heartbeat[0]} must be less than ${session[0]}`)
}

/**
 * Validates topic configs (CreateTopics, AlterConfigs) and returns their effect on the log.
 * `defaults` (the broker's log defaults) complete the values checked together
 * (min.compaction.lag.ms against max.compaction.lag.ms).
 */
export function topicLogConfig(configs: Record<string, string>, defaults: LogConfig = DEFAULT_LOG_CONFIG): Partial<LogConfig> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(configs)) {
    const log = LOG_FIELD_OF.get(name)
    if (log) out[log.field] = log.key.value.parse(value, name)
    else if (OTHER_TOPIC_KEY_OF.has(name)) OTHER_TOPIC_KEY_OF.get(name)!.value.parse(value, name)
    else if (!LEGACY_TOPIC_CONFIG_NAMES.has(name)) throw new ConfigError(`unknown topic config ${name}`)
  }
  checkCompactionLags({ ...defaults, ...(out as Partial<LogConfig>) })
  return out
}

/**
 * min.insync.replicas is a topic config that is not the log's (the replica manager reads it on
 * every acks=all produce): the topic's own value, else the broker's default.
 */
const MIN_INSYNC_REPLICAS = 'min.insync.replicas'

export function topicMinInsyncReplicas(configs: Record<string, string> | undefined, broker: Pick<BrokerConfig, 'minInsyncReplicas'>): number {
  const own = configs?.[MIN_INSYNC_REPLICAS]
  return own !== undefined ? (OTHER_TOPIC_KEY_OF.get(MIN_INSYNC_REPLICAS)!.value.parse(own, MIN_INSYNC_REPLICAS) as number) : (broker.minInsyncReplicas ?? DEFAULT_MIN_INSYNC_REPLICAS)
}

/** server.properties as Kafka reads it (Java's Properties format: continuation lines, escapes, `:` separators). */
export function parseProperties(text: string): Record<string, string> {
  return Object.fromEntries(parseJavaProperties(text))
}

/**
 * The value `props` give a key: its own name, else its synonyms in order (a unit synonym scaled
 * to the key's unit, a negative one meaning -1); undefined when none is set.
 */
export function keyValueFrom(key: BrokerConfigKey<unknown>, props: Record<string, string>): { value: unknown } | undefined {
  const own = props[key.name]
  if (own !== undefined) return { value: key.value.parse(own, key.name) }
  for (const synonym of key.synonyms ?? []) {
    const text = props[synonym.name]
    if (text === undefined) continue
    const v = key.value.parse(text, synonym.name)
    return { value: typeof v === 'number' && synonym.factor !== 1 ? (v < 0 ? -1 : v * synonym.factor) : v }
  }
  return undefined
}

/** A broker config with every key at its default. */
function defaultBrokerConfig(): BrokerConfig {
  const config = { logDefaults: { ...DEFAULT_LOG_CONFIG }, cleaner: { ...DEFAULT_CLEANER_CONFIG }, cluster: {}, listenerOverrides: {}, ssl: {} } as unknown as BrokerConfig
  for (const key of BROKER_CONFIG_KEYS) key.set(config, key.default)
  return config
}

/** The broker config from server.properties-style settings (all optional). */
export function brokerConfigFrom(props: Record<string, string>): BrokerConfig {
  const config = defaultBrokerConfig()
  for (const key of BROKER_CONFIG_KEYS) {
    const given = keyValueFrom(key, props)
    if (given) key.set(config, given.value)
  }
  for (const [name, value] of Object.entries(props)) if (name.startsWith('listener.name.')) config.listenerOverrides[name] = value
  resolveListeners(config, props)
  if (props['transfer.mode'] === undefined) config.transfer = defaultTransferMode()
  checkCompactionLags(config.logDefaults)
  checkConsumerGroupConfigs(config)
  return config
}

export function readPropertiesFile(file: string): Record<string, string> {
  try {
    return parseProperties(readFileSync(file, 'utf8'))
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${file}: ${err.message}`)
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`)
  }
}
