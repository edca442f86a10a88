/**
 * The ShareConsumer's configuration (Kafka's ShareConsumerConfig, KIP-932): Kafka's dotted names
 * or camelCase, Kafka's defaults; unknown names refused with INVALID_CONFIG. group.id is required.
 *
 * - share.acknowledgement.mode: implicit (default) or explicit (acknowledgements.ts).
 * - share.acquire.mode (KIP-1206): batch_optimized (default: the broker may hand out whole
 *   batches past max.poll.records) or record_limit (at most max.poll.records per fetch).
 * - max.poll.records (500) is also the ShareFetch's maxRecords and batchSize, as in Java.
 * - What a KafkaConsumer has and a share consumer does not (auto.offset.reset: the group's
 *   share.auto.offset.reset; enable.auto.commit; isolation.level: the group's
 *   share.isolation.level; group.instance.id; partition.assignment.strategy) is refused.
 */
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '../protocol/compression.js'
import type { AcknowledgementMode } from './acknowledgements.js'
import type { ClientSecurity } from './client-security.js'
import { asInteger, invalidConfig, readClientOptions } from './client-options.js'

export type ShareAcquireMode = 'batch_optimized' | 'record_limit'

export interface ShareConsumerConfig {
  bootstrapServers: string | string[]
  groupId: string
  clientId: string
  clientRack: string
  shareAcknowledgementMode: AcknowledgementMode
  shareAcquireMode: ShareAcquireMode
  fetchMinBytes: number
  fetchMaxWaitMs: number
  fetchMaxBytes: number
  maxPollRecords: number
  requestTimeoutMs: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  defaultApiTimeoutMs: number
  /** ferrolog's own, as the Consumer's: the most one compressed batch may decompress to. */
  maxDecompressedBytes: number
  security: ClientSecurity
}

export type ShareConsumerOptions = { bootstrapServers?: string | string[]; 'bootstrap.servers'?: string | string[] } & Partial<
  Record<Exclude<keyof ShareConsumerConfig, 'bootstrapServers'>, unknown>
> &
  Record<string, unknown>

const DEFAULTS: Omit<ShareConsumerConfig, 'bootstrapServers' | 'security' | 'groupId'> = {
  clientId: 'ferrolog-share-consumer',
  clientRack: '',
  shareAcknowledgementMode: 'implicit',
  shareAcquireMode: 'batch_optimized',
  fetchMinBytes: 1,
  fetchMaxWaitMs: 500,
  fetchMaxBytes: 52_428_800,
  maxPollRecords: 500,
  requestTimeoutMs: 30_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  defaultApiTimeoutMs: 60_000,
  maxDecompressedBytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
}

export function shareConsumerConfigFrom(options: ShareConsumerOptions): ShareConsumerConfig {
  const { bootstrapServers, security, given } = readClientOptions(options, false)
  const groupId = given.get('groupId')
  given.delete('groupId')
  if (groupId === undefined || typeof groupId[1] !== 'string' || groupId[1] === '') throw invalidConfig('group.id', groupId?.[1], 'a share consumer needs a group.id')
  const config: ShareConsumerConfig = { ...DEFAULTS, bootstrapServers, security, groupId: groupId[1] }
  const c = config as unknown as Record<string, unknown>
  for (const [key, [name, value]] of given) {
    if (!(key in DEFAULTS)) throw invalidConfig(name, value, 'not a share consumer config')
    const def = DEFAULTS[key as keyof typeof DEFAULTS]
    if (typeof def === 'number') c[key] = asInteger(name, value, key === 'fetchMaxWaitMs' || key === 'fetchMinBytes' ? 0 : 1)
    else if (typeof value === 'string') c[key] = key.startsWith('share') ? value.toLowerCase() : value
    else throw invalidConfig(name, value, 'a string')
  }
  if (config.shareAcknowledgementMode !== 'implicit' && config.shareAcknowledgementMode !== 'explicit') {
    throw invalidConfig('share.acknowledgement.mode', config.shareAcknowledgementMode, 'implicit or explicit')
  }
  if (config.shareAcquireMode !== 'batch_optimized' && config.shareAcquireMode !== 'record_limit') {
    throw invalidConfig('share.acquire.mode', config.shareAcquireMode, 'batch_optimized or record_limit')
  }
  return config
}
