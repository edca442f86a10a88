/**
 * The Consumer's configuration (Kafka's ConsumerConfig): every option may be given by Kafka's
 * dotted name (`fetch.max.wait.ms`) or in camelCase (`fetchMaxWaitMs`); defaults are Kafka's.
 * Unknown names are refused with INVALID_CONFIG, so a typo does not pass silently.
 * The security settings (security.protocol, ssl.*, sasl.*, oauthBearerProvider) are read by
 * client-security.ts into `security`.
 */
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '../protocol/compression.js'
import type { ClientSecurity } from './client-security.js'
import { asBoolean, asInteger, invalidConfig, readClientOptions } from './client-options.js'
import type { Deserializer } from './consumer-record.js'

export type AutoOffsetReset = 'earliest' | 'latest' | 'none'
/** group.protocol: `classic` (JoinGroup/SyncGroup, the default as in Kafka 4) or `consumer` (KIP-848). */
export type GroupProtocol = 'classic' | 'consumer'
export type IsolationLevel = 'read_uncommitted' | 'read_committed'

export interface ConsumerConfig {
  bootstrapServers: string | string[]
  groupId: string | null
  groupInstanceId: string | null
  groupProtocol: GroupProtocol
  /** group.remote.assignor: the server-side assignor a KIP-848 member asks for (null: the coordinator's default). */
  groupRemoteAssignor: string | null
  clientId: string
  clientRack: string
  isolationLevel: IsolationLevel
  fetchMinBytes: number
  fetchMaxWaitMs: number
  fetchMaxBytes: number
  maxPartitionFetchBytes: number
  autoOffsetReset: AutoOffsetReset
  enableAutoCommit: boolean
  autoCommitIntervalMs: number
  sessionTimeoutMs: number
  heartbeatIntervalMs: number
  maxPollIntervalMs: number
  maxPollRecords: number
  metadataMaxAgeMs: number
  requestTimeoutMs: number
  retryBackoffMs: number
  /** retry.backoff.max.ms: the longest backoff between a KIP-848 member's failed heartbeats. */
  retryBackoffMaxMs: number
  checkCrcs: boolean
  /** Assignor names in order of preference (range, roundrobin). */
  partitionAssignmentStrategy: string[]
  defaultApiTimeoutMs: number
  /**
   * ferrolog's own (Kafka's consumer has none): the most the records of one compressed batch
   * may decompress to, 128 MiB by default. A batch past it is not inflated further: poll throws
   * a KafkaClientError MESSAGE_TOO_LARGE naming its offset (after the records before it), again
   * at each poll until the application seeks past the batch or raises the bound.
   */
  maxDecompressedBytes: number
  /**
   * key.deserializer / value.deserializer: `buffer` (the default: Buffers over the fetched data)
   * or `string` (UTF-8, decoded straight from the fetched data). Kafka's class names are taken
   * too: StringDeserializer, ByteBufferDeserializer and ByteArrayDeserializer (a Buffer).
   */
  keyDeserializer: Deserializer
  valueDeserializer: Deserializer
  /** TLS and SASL, from security.protocol, ssl.* and sasl.* (client-security.ts). */
  security: ClientSecurity
}

/** What `new Consumer(...)` takes: any ConsumerConfig field by either name. */
export type ConsumerOptions = { bootstrapServers?: string | string[]; 'bootstrap.servers'?: string | string[] } & Partial<Record<Exclude<keyof ConsumerConfig, 'bootstrapServers'>, unknown>> &
  Record<string, unknown>

const DEFAULTS: Omit<ConsumerConfig, 'bootstrapServers' | 'security'> = {
  groupId: null,
  groupInstanceId: null,
  groupProtocol: 'classic',
  groupRemoteAssignor: null,
  clientId: 'ferrolog-consumer',
  clientRack: '',
  isolationLevel: 'read_uncommitted',
  fetchMinBytes: 1,
  fetchMaxWaitMs: 500,
  fetchMaxBytes: 52_428_800,
  maxPartitionFetchBytes: 1_048_576,
  autoOffsetReset: 'latest',
  enableAutoCommit: true,
  autoCommitIntervalMs: 5000,
  sessionTimeoutMs: 45_000,
  heartbeatIntervalMs: 3000,
  maxPollIntervalMs: 300_000,
  maxPollRecords: 500,
  metadataMaxAgeMs: 300_000,
  requestTimeoutMs: 30_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  checkCrcs: true,
  partitionAssignmentStrategy: ['range', 'roundrobin'],
  defaultApiTimeoutMs: 60_000,
  maxDecompressedBytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
  keyDeserializer: 'buffer',
  valueDeserializer: 'buffer',
}

/** A deserializer's name, or Kafka's class name for it; null when neither. */
function deserializerNamed(name: string): Deserializer | null {
  const simple = name.slice(name.lastIndexOf('.') + 1)
  if (name === 'string' || simple === 'StringDeserializer') return 'string'
  if (name === 'buffer' || simple === 'ByteBufferDeserializer' || simple === 'ByteArrayDeserializer') return 'buffer'
  return null
}

export function consumerConfigFrom(options: ConsumerOptions): ConsumerConfig {
  const { bootstrapServers, security, given } = readClientOptions(options, false)
  const config: ConsumerConfig = { ...DEFAULTS, bootstrapServers, security }
  for (const [key, [name, value]] of given) {
    if (!(key in DEFAULTS)) throw invalidConfig(name, value, 'not a consumer config')
    const def = DEFAULTS[key as keyof typeof DEFAULTS]
    const c = config as unknown as Record<string, unknown>
    if (typeof def === 'number') c[key] = asInteger(name, value, key === 'fetchMaxWaitMs' || key === 'fetchMinBytes' ? 0 : 1)
    else if (typeof def === 'boolean') c[key] = asBoolean(name, value)
    else if (key === 'partitionAssignmentStrategy')
      c[key] = Array.isArray(value)
        ? value.map(String)
        : String(value)
            .split(',')
            .map((s) => s.trim())
    else if (value === null && (key === 'groupId' || key === 'groupInstanceId' || key === 'groupRemoteAssignor')) c[key] = null
    else if (typeof value === 'string') c[key] = value
    else throw invalidConfig(name, value, 'a string')
  }
  config.isolationLevel = config.isolationLevel.toLowerCase() as IsolationLevel
  if (config.isolationLevel !== 'read_committed' && config.isolationLevel !== 'read_uncommitted') {
    throw invalidConfig('isolation.level', config.isolationLevel, 'read_committed or read_uncommitted')
  }
  for (const [key, name] of [
    ['keyDeserializer', 'key.deserializer'],
    ['valueDeserializer', 'value.deserializer'],
  ] as const) {
    const d = deserializerNamed(config[key])
    if (d === null) throw invalidConfig(name, config[key], 'buffer or string (or StringDeserializer, ByteBufferDeserializer, ByteArrayDeserializer)')
    config[key] = d
  }
  if (!['earliest', 'latest', 'none'].includes(config.autoOffsetReset)) throw invalidConfig('auto.offset.reset', config.autoOffsetReset, 'earliest, latest or none')
  const protocol = String(config.groupProtocol).toUpperCase()
  if (protocol !== 'CLASSIC' && protocol !== 'CONSUMER') throw invalidConfig('group.protocol', config.groupProtocol, 'String must be one of (case insensitive): CONSUMER, CLASSIC')
  config.groupProtocol = protocol.toLowerCase() as GroupProtocol
  // As Kafka's ConsumerConfig: the classic protocol's own settings are refused with the new one
  // (the coordinator sets the session and the heartbeat interval, and assigns the partitions),
  // and a server-side assignor means nothing to the classic one.
  if (config.groupProtocol === 'consumer') {
    for (const [key, name] of [
      ['partitionAssignmentStrategy', 'partition.assignment.strategy'],
      ['sessionTimeoutMs', 'session.timeout.ms'],
      ['heartbeatIntervalMs', 'heartbeat.interval.ms'],
    ] as const) {
      if (given.has(key)) throw invalidConfig(name, given.get(key)![1], 'cannot be set when group.protocol=CONSUMER')
    }
  } else if (config.groupRemoteAssignor !== null && config.groupRemoteAssignor !== '') {
    throw invalidConfig('group.remote.assignor', config.groupRemoteAssignor, 'cannot be set when group.protocol=CLASSIC')
  }
  if (config.groupProtocol === 'classic' && config.heartbeatIntervalMs >= config.sessionTimeoutMs) {
    throw invalidConfig('heartbeat.interval.ms', config.heartbeatIntervalMs, 'must be below session.timeout.ms')
  }
  if (config.groupId === '') throw invalidConfig('group.id', '', 'empty')
  return config
}
