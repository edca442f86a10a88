/**
 * The Producer's configuration (Kafka's ProducerConfig): every option by Kafka's dotted name
 * (`linger.ms`) or in camelCase (`lingerMs`); defaults are Kafka 4's. Unknown names are refused
 * with INVALID_CONFIG. The security settings (security.protocol, ssl.*, sasl.*) are read by
 * client-security.ts into `security` (or `security` is given as a ClientSecurity already read).
 *
 * Idempotence follows Kafka's rules (ProducerConfig.postProcessAndValidateIdempotenceConfigs):
 * on by default; when not asked for explicitly it is turned off by settings that conflict with
 * it (acks other than all, max.in.flight.requests.per.connection above 5, retries 0); asked for
 * explicitly with such a setting, or a transactional.id without it, is INVALID_CONFIG.
 * delivery.timeout.ms must be at least linger.ms + request.timeout.ms, as Kafka checks.
 */
import type { CompressionType } from '../protocol/record-types.js'
import { COMPRESSION_TYPES } from '../protocol/compression.js'
import type { ClientSecurity } from './client-security.js'
import { asBoolean, asInteger, invalidConfig, readClientOptions } from './client-options.js'

export type Acks = 0 | 1 | -1

export interface ProducerConfig {
  bootstrapServers: string | string[]
  clientId: string
  /** 0, 1 or -1 ("all"). */
  acks: Acks
  batchSize: number
  lingerMs: number
  compressionType: CompressionType
  enableIdempotence: boolean
  maxInFlightRequestsPerConnection: number
  retries: number
  deliveryTimeoutMs: number
  requestTimeoutMs: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  bufferMemory: number
  maxBlockMs: number
  maxRequestSize: number
  transactionalId: string | null
  transactionTimeoutMs: number
  metadataMaxAgeMs: number
  /** partitioner.ignore.keys: keyed records are partitioned as keyless ones (sticky). */
  partitionerIgnoreKeys: boolean
  /** TLS and SASL, from security.protocol, ssl.* and sasl.* (client-security.ts). */
  security: ClientSecurity
}

/** What `new Producer(...)` takes: any ProducerConfig field by either name. */
export type ProducerOptions = { bootstrapServers?: string | string[]; 'bootstrap.servers'?: string | string[]; security?: ClientSecurity } & Record<string, unknown>

type Defaults = Omit<ProducerConfig, 'bootstrapServers' | 'security'>

const DEFAULTS: Defaults = {
  clientId: 'ferrolog-producer',
  acks: -1,
  batchSize: 16_384,
  lingerMs: 5,
  compressionType: 'none',
  enableIdempotence: true,
  maxInFlightRequestsPerConnection: 5,
  retries: 2_147_483_647,
  deliveryTimeoutMs: 120_000,
  requestTimeoutMs: 30_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  bufferMemory: 33_554_432,
  maxBlockMs: 60_000,
  maxRequestSize: 1_048_576,
  transactionalId: null,
  transactionTimeoutMs: 60_000,
  metadataMaxAgeMs: 300_000,
  partitionerIgnoreKeys: false,
}

/** Options whose smallest value is 0 (the others are at least 1). */
const ZERO_ALLOWED = new Set(['lingerMs', 'retries', 'retryBackoffMs', 'retryBackoffMaxMs', 'maxBlockMs'])

function asAcks(value: unknown): Acks {
  const s = String(value).toLowerCase()
  if (s === 'all' || s === '-1') return -1
  if (s === '0' || s === '1') return Number(s) as Acks
  throw invalidConfig('acks', value, '0, 1, -1 or all')
}

export function producerConfigFrom(options: ProducerOptions): ProducerConfig {
  const { bootstrapServers, security, given } = readClientOptions(options, true)
  const config: ProducerConfig = { ...DEFAULTS, bootstrapServers, security }
  const c = config as unknown as Record<string, unknown>
  for (const [key, [name, value]] of given) {
    if (!(key in DEFAULTS)) throw invalidConfig(name, value, 'not a producer config')
    const def = DEFAULTS[key as keyof Defaults]
    if (key === 'acks') c[key] = asAcks(value)
    else if (key === 'compressionType') {
      if (!COMPRESSION_TYPES.includes(value as CompressionType)) throw invalidConfig(name, value, COMPRESSION_TYPES.join(', '))
      c[key] = value
    } else if (key === 'transactionalId') {
      if (value !== null && (typeof value !== 'string' || value === '')) throw invalidConfig(name, value, 'a non-empty string')
      c[key] = value
    } else if (typeof def === 'number') c[key] = asInteger(name, value, ZERO_ALLOWED.has(key) ? 0 : 1)
    else if (typeof def === 'boolean') c[key] = asBoolean(name, value)
    else if (typeof value === 'string') c[key] = value
    else throw invalidConfig(name, value, 'a string')
  }

  const explicit = given.has('enableIdempotence') && config.enableIdempotence
  const conflicts: string[] = []
  if (config.acks !== -1) conflicts.push('acks must be all')
  if (config.maxInFlightRequestsPerConnection > 5) conflicts.push('max.in.flight.requests.per.connection must be at most 5')
  if (config.retries === 0) conflicts.push('retries must be above 0')
  if (conflicts.length > 0) {
    if (explicit || config.transactionalId !== null) throw invalidConfig('enable.idempotence', true, conflicts.join('; '))
    config.enableIdempotence = false
  }
  if (config.transactionalId !== null && !config.enableIdempotence) throw invalidConfig('transactional.id', config.transactionalId, 'needs enable.idempotence=true')
  if (config.deliveryTimeoutMs < config.lingerMs + config.requestTimeoutMs) {
    throw invalidConfig('delivery.timeout.ms', config.deliveryTimeoutMs, 'must be at least linger.ms + request.timeout.ms')
  }
  return config
}
