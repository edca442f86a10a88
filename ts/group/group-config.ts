/**
 * A group's own configs (Kafka's `GroupConfig`, KIP-848/932/1071), as Apache Kafka 4.4 defines
 * them: each key with its type, the broker config that gives its default (its synonym, Kafka's
 * `ALL_GROUP_CONFIG_SYNONYMS`), the bound of its ConfigDef, and the broker's range it must stay
 * in (Kafka's `GroupCoordinatorConfig` and `ShareGroupConfig`: `group.consumer.min.session.timeout.ms`
 * and the like). The consumer protocol's defaults and ranges are the broker's own settings
 * (`ConsumerGroupBrokerConfigs`, group.consumer.*, and its `share` part, group.share.*); the
 * streams ones and the other share ones are Kafka's defaults of broker settings ferrolog does not
 * have.
 *
 * They apply to the consumer (KIP-848), share (KIP-932) and streams (KIP-1071) group protocols:
 * ferrolog's coordinator reads consumer.session.timeout.ms, consumer.heartbeat.interval.ms,
 * share.session.timeout.ms, share.heartbeat.interval.ms and share.assignment.interval.ms; a
 * classic group keeps the session timeout its members ask for (within
 * group.min/max.session.timeout.ms). The others are validated and kept
 * (./group-config-manager.ts) so that tools and a future coordinator see what Kafka shows.
 *
 * Validation, in Kafka's order (`GroupConfig.validate`): an unknown name; a value that does not
 * parse as its type or fails its ConfigDef bound; a value outside the broker's range; a session
 * timeout not above its heartbeat interval (the broker's default standing in for the one not
 * set); duplicate rack tags; a dead-letter-queue topic name starting with `__`; a streams
 * assignor not registered.
 * Each failure is a GroupConfigError with Kafka's message (INVALID_CONFIG on the wire).
 */

export type GroupConfigType = 'INT' | 'LONG' | 'BOOLEAN' | 'STRING' | 'LIST'

export interface GroupConfigDef {
  name: string
  type: GroupConfigType
  /** The broker config that gives the default (DescribeConfigs' DEFAULT_CONFIG synonym). */
  synonym: string
  defaultValue: string
  /** ConfigDef.Range.atLeast. */
  atLeast?: number
  /** ConfigDef.ValidString.in. */
  oneOf?: readonly string[]
  /** The broker's range (inclusive) a value must stay in; a missing end is open. */
  range?: { min?: number; max?: number }
  /** Defined with `defineInternal`: accepted, not listed by DescribeConfigs. */
  internal?: boolean
}

/**
 * The broker's consumer group protocol settings (Kafka's GroupCoordinatorConfig): the defaults of
 * consumer.session.timeout.ms and consumer.heartbeat.interval.ms and the ranges a group's values
 * must stay in.
 */
export interface ConsumerGroupBrokerConfigs {
  /** group.consumer.session.timeout.ms, group.consumer.min/max.session.timeout.ms */
  sessionTimeoutMs: number
  minSessionTimeoutMs: number
  maxSessionTimeoutMs: number
  /** group.consumer.heartbeat.interval.ms, group.consumer.min/max.heartbeat.interval.ms */
  heartbeatIntervalMs: number
  minHeartbeatIntervalMs: number
  maxHeartbeatIntervalMs: number
  /** The share group protocol's (group.share.*): Kafka's defaults when not given. */
  share?: Omit<ConsumerGroupBrokerConfigs, 'share' | 'shareRecords'>
  /** The share partitions' (group.share.record.lock.duration.ms, delivery.count.limit, partition.max.record.locks, each with its min and max): Kafka's when not given. */
  shareRecords?: ShareRecordBrokerConfigs
}

/** The broker settings behind a share group's share.record.lock.duration.ms, share.delivery.count.limit and share.partition.max.record.locks: each default and its range. */
export interface ShareRecordBrokerConfigs {
  recordLockDurationMs: number
  minRecordLockDurationMs: number
  maxRecordLockDurationMs: number
  deliveryCountLimit: number
  minDeliveryCountLimit: number
  maxDeliveryCountLimit: number
  partitionMaxRecordLocks: number
  minPartitionMaxRecordLocks: number
  maxPartitionMaxRecordLocks: number
}

/** Kafka 4.4's defaults of the above (ShareGroupConfig). */
export const KAFKA_SHARE_RECORD_BROKER_CONFIGS: ShareRecordBrokerConfigs = {
  recordLockDurationMs: 30_000,
  minRecordLockDurationMs: 15_000,
  maxRecordLockDurationMs: 60_000,
  deliveryCountLimit: 5,
  minDeliveryCountLimit: 2,
  maxDeliveryCountLimit: 10,
  partitionMaxRecordLocks: 2000,
  minPartitionMaxRecordLocks: 100,
  maxPartitionMaxRecordLocks: 4000,
}

/** Kafka 4.4's defaults of ConsumerGroupBrokerConfigs. */
export const KAFKA_CONSUMER_GROUP_BROKER_CONFIGS: ConsumerGroupBrokerConfigs = {
  sessionTimeoutMs: 45_000,
  minSessionTimeoutMs: 45_000,
  maxSessionTimeoutMs: 60_000,
  heartbeatIntervalMs: 5000,
  minHeartbeatIntervalMs: 5000,
  maxHeartbeatIntervalMs: 15_000,
}

/** Kafka's defaults of the broker settings that bound the share and streams group configs (ShareGroupConfig, GroupCoordinatorConfig), which ferrolog's brokers do not have. */
export const GROUP_CONFIG_BROKER_DEFAULTS = {
  'group.streams.assignors': 'sticky',
} as const

const int = (name: string, synonym: string, defaultValue: number, atLeast: number, range?: { min?: number; max?: number }, internal = false): GroupConfigDef => ({
  name,
  type: 'INT',
  synonym,
  defaultValue: String(defaultValue),
  atLeast,
  range,
  internal,
})
const bool = (name: string, synonym: string, defaultValue: boolean, internal = false): GroupConfigDef => ({ name, type: 'BOOLEAN', synonym, defaultValue: String(defaultValue), internal })

const SESSION = { min: 45_000, max: 60_000 }
const HEARTBEAT = { min: 5000, max: 15_000 }
const ASSIGNMENT_INTERVAL = { min: 0, max: 15_000 }

/**
 * Every group config of Kafka 4.4, in the order DescribeConfigs lists them, with the defaults and
 * ranges of a broker whose consumer group settings are `broker`.
 */
export function groupConfigDefs(broker: ConsumerGroupBrokerConfigs): GroupConfigDef[] {
  return [
    int('consumer.session.timeout.ms', 'group.consumer.session.timeout.ms', broker.sessionTimeoutMs, 1, { min: broker.minSessionTimeoutMs, max: broker.maxSessionTimeoutMs }),
    int('consumer.heartbeat.interval.ms', 'group.consumer.heartbeat.interval.ms', broker.heartbeatIntervalMs, 1, { min: broker.minHeartbeatIntervalMs, max: broker.maxHeartbeatIntervalMs }),
    ...OTHER_GROUP_CONFIGS.map((d) => {
      const share = broker.share ?? KAFKA_CONSUMER_GROUP_BROKER_CONFIGS
      if (d.name === 'share.session.timeout.ms') return { ...d, defaultValue: String(share.sessionTimeoutMs), range: { min: share.minSessionTimeoutMs, max: share.maxSessionTimeoutMs } }
      if (d.name === 'share.heartbeat.interval.ms') return { ...d, defaultValue: String(share.heartbeatIntervalMs), range: { min: share.minHeartbeatIntervalMs, max: share.maxHeartbeatIntervalMs } }
      const records = broker.shareRecords ?? KAFKA_SHARE_RECORD_BROKER_CONFIGS
      if (d.name === 'share.record.lock.duration.ms')
        return { ...d, defaultValue: String(records.recordLockDurationMs), range: { min: records.minRecordLockDurationMs, max: records.maxRecordLockDurationMs } }
      if (d.name === 'share.delivery.count.limit') return { ...d, defaultValue: String(records.deliveryCountLimit), range: { min: records.minDeliveryCountLimit, max: records.maxDeliveryCountLimit } }
      if (d.name === 'share.partition.max.record.locks')
        return { ...d, defaultValue: String(records.partitionMaxRecordLocks), range: { min: records.minPartitionMaxRecordLocks, max: records.maxPartitionMaxRecordLocks } }
      return d
    }),
  ]
}

/** The group configs whose defaults and ranges do not come from ferrolog's broker settings. */
const OTHER_GROUP_CONFIGS: readonly GroupConfigDef[] = [
  int('consumer.assignment.interval.ms', 'group.consumer.assignment.interval.ms', 1000, 0, ASSIGNMENT_INTERVAL),
  bool('consumer.assignor.offload.enable', 'group.consumer.assignor.offload.enable', true, true),
  int('share.session.timeout.ms', 'group.share.session.timeout.ms', 45_000, 1, SESSION),
  int('share.heartbeat.interval.ms', 'group.share.heartbeat.interval.ms', 5000, 1, HEARTBEAT),
  int('share.record.lock.duration.ms', 'group.share.record.lock.duration.ms', 30_000, 1000, { min: 15_000, max: 60_000 }),
  int('share.delivery.count.limit', 'group.share.delivery.count.limit', 5, 2, { min: 2, max: 10 }),
  int('share.partition.max.record.locks', 'group.share.partition.max.record.locks', 2000, 100, { min: 100, max: 4000 }),
  { name: 'share.auto.offset.reset', type: 'STRING', synonym: 'share.auto.offset.reset', defaultValue: 'latest' },
  { name: 'share.isolation.level', type: 'STRING', synonym: 'share.isolation.level', defaultValue: 'read_uncommitted', oneOf: ['read_committed', 'read_uncommitted'] },
  bool('share.renew.acknowledge.enable', 'share.renew.acknowledge.enable', true),
  int('share.assignment.interval.ms', 'group.share.assignment.interval.ms', 1000, 0, ASSIGNMENT_INTERVAL),
  bool('share.assignor.offload.enable', 'group.share.assignor.offload.enable', true, true),
  int('streams.session.timeout.ms', 'group.streams.session.timeout.ms', 45_000, 1, SESSION),
  int('streams.heartbeat.interval.ms', 'group.streams.heartbeat.interval.ms', 5000, 1, HEARTBEAT),
  int('streams.num.standby.replicas', 'group.streams.num.standby.replicas', 0, 0, { max: 2 }),
  int('streams.initial.rebalance.delay.ms', 'group.streams.initial.rebalance.delay.ms', 3000, 0),
  int('streams.assignment.interval.ms', 'group.streams.assignment.interval.ms', 1000, 0, ASSIGNMENT_INTERVAL),
  bool('streams.assignor.offload.enable', 'group.streams.assignor.offload.enable', true, true),
  int('streams.task.offset.interval.ms', 'group.streams.task.offset.interval.ms', 60_000, 1, { min: 15_000 }, true),
  int('streams.num.warmup.replicas', 'group.streams.num.warmup.replicas', 2, 0, { max: 20 }, true),
  { name: 'streams.rack.aware.assignment.tags', type: 'LIST', synonym: 'group.streams.rack.aware.assignment.tags', defaultValue: '' },
  { name: 'streams.acceptable.recovery.lag', type: 'LONG', synonym: 'group.streams.acceptable.recovery.lag', defaultValue: '10000', atLeast: 0, internal: true },
  { name: 'streams.assignor.name', type: 'STRING', synonym: 'group.streams.assignors', defaultValue: GROUP_CONFIG_BROKER_DEFAULTS['group.streams.assignors'] },
  { name: 'errors.deadletterqueue.topic.name', type: 'STRING', synonym: 'errors.deadletterqueue.topic.name', defaultValue: '' },
  bool('errors.deadletterqueue.copy.record.enable', 'errors.deadletterqueue.copy.record.enable', false),
]

const NAMES = new Set(groupConfigDefs(KAFKA_CONSUMER_GROUP_BROKER_CONFIGS).map((d) => d.name))

/**
 * Kafka's `GroupConfig.validateValues` order of the range checks: each protocol's heartbeat
 * interval before its session timeout, then the rest as listed.
 */
const RANGE_ORDER = [
  'consumer.heartbeat.interval.ms',
  'consumer.session.timeout.ms',
  'consumer.assignment.interval.ms',
  'share.heartbeat.interval.ms',
  'share.session.timeout.ms',
  'share.record.lock.duration.ms',
  'share.delivery.count.limit',
  'share.partition.max.record.locks',
  'share.assignment.interval.ms',
  'streams.heartbeat.interval.ms',
  'streams.session.timeout.ms',
  'streams.num.standby.replicas',
  'streams.assignment.interval.ms',
  'streams.task.offset.interval.ms',
  'streams.num.warmup.replicas',
]

/** A group config refused, with Kafka's message (InvalidConfigurationException: INVALID_CONFIG). */
export class GroupConfigError extends Error {
  readonly code = 'INVALID_GROUP_CONFIG'
}

const INT_MAX = 2 ** 31 - 1
const LONG_MAX = 2n ** 63n - 1n

/** ConfigDef.parseType: the value as Kafka reads it (trimmed), or a GroupConfigError. */
function parse(def: GroupConfigDef, raw: string): number | bigint | boolean | string | string[] {
  const value = raw.trim()
  const fail = (why: string) => new GroupConfigError(`Invalid value ${raw} for configuration ${def.name}: ${why}`)
  switch (def.type) {
    case 'INT': {
      if (!/^[+-]?\d+$/.test(value) || Math.abs(Number(value)) > INT_MAX + 1 || Number(value) > INT_MAX) throw fail('Not a number of type INT')
      return Number(value)
    }
    case 'LONG': {
      if (!/^[+-]?\d+$/.test(value) || BigInt(value) > LONG_MAX || BigInt(value) < -LONG_MAX - 1n) throw fail('Not a number of type LONG')
      return BigInt(value)
    }
    case 'BOOLEAN': {
      const lower = value.toLowerCase()
      if (lower !== 'true' && lower !== 'false') throw fail('Expected value to be either true or false')
      return lower === 'true'
    }
    case 'LIST':
      return value === '' ? [] : value.split(/\s*,\s*/)
    default:
      return value
  }
}

/** ConfigDef's validator of one key (Range.atLeast, ValidString.in, the share reset strategy). */
function checkBound(def: GroupConfigDef, raw: string, value: ReturnType<typeof parse>): void {
  const fail = (why: string) => new GroupConfigError(`Invalid value ${raw} for configuration ${def.name}: ${why}`)
  if (def.atLeast !== undefined && (typeof value === 'bigint' ? value < BigInt(def.atLeast) : (value as number) < def.atLeast)) throw fail(`Value must be at least ${def.atLeast}`)
  if (def.oneOf && !def.oneOf.includes(value as string)) throw fail(`String must be one of: ${def.oneOf.join(', ')}`)
  if (def.name === 'share.auto.offset.reset' && !isShareResetStrategy(value as string)) {
    throw fail(`Invalid value \`${value}\` for configuration ${def.name}. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.`)
  }
}

/** latest, earliest, or by_duration:<a non-negative ISO-8601 duration> (ShareGroupAutoOffsetResetStrategy). */
function isShareResetStrategy(value: string): boolean {
  const v = value.toLowerCase()
  if (v === 'latest' || v === 'earliest') return true
  const duration = /^by_duration:(.*)$/.exec(v)?.[1]
  return duration !== undefined && /^p(?:\d+d)?(?:t(?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?s)?)?$/.test(duration) && duration !== 'p' && !duration.endsWith('t')
}

/** Kafka's validateSessionExceedsHeartbeat pairs: [session key, heartbeat key]. */
const SESSION_HEARTBEAT: ReadonlyArray<readonly [string, string]> = [
  ['consumer.session.timeout.ms', 'consumer.heartbeat.interval.ms'],
  ['share.session.timeout.ms', 'share.heartbeat.interval.ms'],
  ['streams.session.timeout.ms', 'streams.heartbeat.interval.ms'],
]

/**
 * Kafka's `GroupConfig.validate` of a group's overrides (the whole set, as it will be): throws
 * GroupConfigError with Kafka's message at the first problem; returns the overrides trimmed.
 */
export function validateGroupConfigs(overrides: Readonly<Record<string, string>>, broker: ConsumerGroupBrokerConfigs = KAFKA_CONSUMER_GROUP_BROKER_CONFIGS): Record<string, string> {
  for (const name of Object.keys(overrides)) if (!NAMES.has(name)) throw new GroupConfigError(`Unknown group config name: ${name}`)
  const defs = groupConfigDefs(broker)
  const byName = new Map(defs.map((d) => [d.name, d]))
  const values = new Map<string, ReturnType<typeof parse>>()
  for (const def of defs) {
    const raw = overrides[def.name]
    if (raw === undefined) continue
    const value = parse(def, raw)
    checkBound(def, raw, value)
    values.set(def.name, value)
  }
  for (const name of RANGE_ORDER) {
    const def = byName.get(name)!
    const value = values.get(name)
    if (value === undefined || !def.range) continue
    const n = Number(value)
    const { min, max } = def.range
    if (min !== undefined && max !== undefined) {
      if (n < min || n > max) throw new GroupConfigError(`${def.name} must be in the range ${min} to ${max} inclusive.`)
    } else if (max !== undefined && n > max) {
      throw new GroupConfigError(`${def.name} must be less than or equal to ${max}`)
    } else if (min !== undefined && n < min) {
      throw new GroupConfigError(`${def.name} must be greater than or equal to ${min}`)
    }
  }
  for (const [sessionKey, heartbeatKey] of SESSION_HEARTBEAT) {
    if (!values.has(sessionKey) && !values.has(heartbeatKey)) continue
    const session = Number(values.get(sessionKey) ?? byName.get(sessionKey)!.defaultValue)
    const heartbeat = Number(values.get(heartbeatKey) ?? byName.get(heartbeatKey)!.defaultValue)
    if (session <= heartbeat) throw new GroupConfigError(`${sessionKey} must be greater than ${heartbeatKey}`)
  }
  const tags = values.get('streams.rack.aware.assignment.tags') as string[] | undefined
  if (tags !== undefined && new Set(tags).size !== tags.length) throw new GroupConfigError('streams.rack.aware.assignment.tags must not contain duplicate tag keys.')
  const dlq = values.get('errors.deadletterqueue.topic.name') as string | undefined
  if (dlq !== undefined && dlq !== '' && dlq.startsWith('__')) throw new GroupConfigError("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'")
  const assignor = values.get('streams.assignor.name') as string | undefined
  const assignors = GROUP_CONFIG_BROKER_DEFAULTS['group.streams.assignors'].split(',')
  if (assignor !== undefined && !assignors.includes(assignor)) {
    throw new GroupConfigError(`streams.assignor.name '${assignor}' is not a registered task assignor. Registered assignors are: [${assignors.join(', ')}].`)
  }
  return Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, v.trim()]))
}
