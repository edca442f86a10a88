/**
 * The cluster's keys in etcd and the format of their values. Every key lives under the prefix
 * `/ferrolog/<clusterId>/` (the etcd3 client's namespace); values are UTF-8 JSON.
 *
 * | key                          | value                                                    | lease            |
 * |------------------------------|----------------------------------------------------------|------------------|
 * | `brokers/<id>`               | {@link BrokerRecord}: id, host, port, rack, listeners, incarnationId | the broker's |
 * | `controller`                 | {@link ControllerRecord}: brokerId, incarnationId        | the controller's broker lease |
 * | `topics/<name>`              | {@link TopicRecord}: topicId, configs, assignment        | none             |
 * | `partitions/<topicId>/<p>`   | {@link PartitionRecord}: a PartitionRegistration         | none             |
 * | `producer-ids`               | {@link ProducerIdBlockRecord}: the last block handed out | none             |
 * | `shutdown/<id>`              | {@link ShutdownRecord}: a controlled shutdown request    | the broker's     |
 * | `configs/brokers/default`    | {@link BrokerConfigsRecord}: cluster-wide dynamic broker configs (KIP-226) | none |
 * | `configs/brokers/<id>`       | {@link BrokerConfigsRecord}: one broker's dynamic configs | none            |
 * | `group-configs/<groupId>`    | the group's config overrides, `{ name: value }` (group-config-store.ts) | none |
 * | `scram-credentials/<mechanism>/<user>` | {@link ScramCredentialRecord}: a user's SCRAM credential (scram-credential-store.ts) | none |
 * | `acls`                       | every ACL, `{ version: 1, acls: [...] }` (acl-store.ts, ts/security/authorizer/acl-json.ts) | none |
 * | `client-quotas`              | every entity's client quotas, `{ version: 1, quotas: [...] }` (client-quota-store.ts, ts/quota/client-quotas-image.ts) | none |
 * | `features`                   | the finalized feature levels, `{ version: 1, features: {...} }` (feature-store.ts, ts/server/finalized-features.ts) | none |
 *
 * Epochs taken from etcd itself rather than stored: a broker's epoch (Kafka's broker epoch) is the
 * mod revision of its `brokers/<id>` key, which moves on every registration; the controller epoch
 * is the create revision of the `controller` key, which moves on every election. Both are etcd
 * revisions: int64, carried as bigint. Partition keys use the topic id (base64url, Kafka's
 * `Uuid.toString`) so a topic deleted and created again under the same name never mixes with its
 * predecessor. A topic is deleted with all its partitions in one transaction; it is created with
 * its first 127 partitions in one, the rest 128 to a transaction (etcd's --max-txn-ops).
 *
 * Sizes (docs/cluster.md, "Scale", has the arithmetic for 100,000 partitions): a partition key is
 * at most 58 bytes with the default cluster id, its value about 80 (RF 3); a topic's value grows
 * by about 8 bytes per partition (its assignment).
 */
import type { ListenerEndPointInfo, PartitionRegistration } from '../replica/partition-registration.js'

export const BROKERS = 'brokers/'
export const CONTROLLER = 'controller'
export const TOPICS = 'topics/'
export const PARTITIONS = 'partitions/'
export const PRODUCER_IDS = 'producer-ids'
export const SHUTDOWN = 'shutdown/'
export const BROKER_CONFIGS = 'configs/brokers/'
export const GROUP_CONFIGS = 'group-configs/'
export const SCRAM_CREDENTIALS = 'scram-credentials/'
export const ACLS = 'acls'
export const FEATURES = 'features'
export const CLIENT_QUOTAS = 'client-quotas'

/** The namespace every key of cluster `clusterId` lives under. */
export function clusterPrefix(clusterId: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(clusterId)) throw new Error(`invalid cluster id "${clusterId}": use [A-Za-z0-9._-]`)
  return `/ferrolog/${clusterId}/`
}

export const brokerKey = (id: number): string => `${BROKERS}${id}`
export const shutdownKey = (id: number): string => `${SHUTDOWN}${id}`
export const topicKey = (name: string): string => `${TOPICS}${name}`
export const groupConfigsKey = (groupId: string): string => `${GROUP_CONFIGS}${groupId}`
/** `scram-credentials/SCRAM-SHA-256/<user>`: the mechanism has no `/`, the user may. */
export const scramCredentialKey = (mechanismName: string, username: string): string => `${SCRAM_CREDENTIALS}${mechanismName}/${username}`
export const partitionsPrefix = (topicId: Buffer): string => `${PARTITIONS}${topicIdString(topicId)}/`
/** `configs/brokers/default` for the cluster-wide defaults (null), else `configs/brokers/<id>`. */
export const brokerConfigsKey = (id: number | null): string => `${BROKER_CONFIGS}${id === null ? 'default' : id}`
export const partitionKey = (topicId: Buffer, partition: number): string => `${partitionsPrefix(topicId)}${partition}`

/** `brokers/<id>`. */
export interface BrokerRecord {
  id: number
  host: string
  port: number
  rack: string | null
  /**
   * Every listener's advertised endpoint (`{ listenerName, securityProtocol, host, port }`);
   * `host`/`port` are the inter-broker listener's. Absent in a record of a broker before
   * listeners: `host`/`port` for every listener.
   */
  listeners?: ListenerEndPointInfo[]
  /** A random id per broker process (Kafka's incarnation id): tells a restart from a re-registration. */
  incarnationId: string
}

/** `controller`. */
export interface ControllerRecord {
  brokerId: number
  incarnationId: string
}

/** `topics/<name>`. */
export interface TopicRecord {
  /** Kafka's Uuid in its string form (base64url, no padding). */
  topicId: string
  configs: Record<string, string>
  /** The replica assignment: assignment[p] is partition p's replicas, the preferred leader first. */
  assignment: number[][]
}

/** `partitions/<topicId>/<p>`: a PartitionRegistration as stored. */
export type PartitionRecord = PartitionRegistration

/** `producer-ids`: the last block allocated (Kafka's `/latest_producer_id_block`). */
export interface ProducerIdBlockRecord {
  /** The broker the block went to. */
  assignedBrokerId: number
  /** int64 as a decimal string. */
  firstProducerId: string
  size: number
}

/** `shutdown/<id>`: a broker asks the controller to move its leadership away. */
export interface ShutdownRecord {
  brokerId: number
  incarnationId: string
  /** Set by the controller when no partition is led by the broker and it is in no ISR it can leave. */
  done: boolean
}

/**
 * `scram-credentials/<mechanism>/<user>`: what Kafka's UserScramCredentialRecord holds, the byte
 * strings in base64; never a password nor a salted password. StoredKey and ServerKey are secrets:
 * anyone who may read the cluster's etcd keys may attack the passwords offline, as with Kafka's
 * metadata log.
 */
export interface ScramCredentialRecord {
  salt: string
  storedKey: string
  serverKey: string
  iterations: number
}

/** `configs/brokers/...`: dynamic broker config names and values as AlterConfigs gave them (ts/server/dynamic-broker-config.ts). */
export type BrokerConfigsRecord = Record<string, string>

export function encode(value: unknown): string {
  return JSON.stringify(value)
}

export function decode<T>(value: Buffer | string): T {
  return JSON.parse(typeof value === 'string' ? value : value.toString('utf8')) as T
}

/** Kafka's Uuid string form: 16 bytes as base64url without padding. */
export function topicIdString(topicId: Buffer): string {
  return topicId.toString('base64url')
}

export function parseTopicId(s: string): Buffer {
  const id = Buffer.from(s, 'base64url')
  if (id.length !== 16) throw new Error(`invalid topic id "${s}"`)
  return id
}

/** A stored registration, checked: an undecodable value is a fault of the store, not a state. */
export function decodePartition(value: Buffer | string): PartitionRecord {
  const r = decode<PartitionRecord>(value)
  if (!Array.isArray(r.replicas) || !Array.isArray(r.isr) || typeof r.leader !== 'number' || typeof r.leaderEpoch !== 'number' || typeof r.partitionEpoch !== 'number') {
    throw new Error(`malformed partition registration ${String(value)}`)
  }
  return { replicas: r.replicas, isr: r.isr, leader: r.leader, leaderEpoch: r.leaderEpoch, partitionEpoch: r.partitionEpoch }
}

/** Splits `partitions/<topicId>/<p>`; null for any other key. */
export function parsePartitionKey(key: string): { topicId: string; partition: number } | null {
  if (!key.startsWith(PARTITIONS)) return null
  const rest = key.slice(PARTITIONS.length)
  const slash = rest.lastIndexOf('/')
  if (slash <= 0) return null
  const partition = Number(rest.slice(slash + 1))
  if (!Number.isInteger(partition) || partition < 0) return null
  return { topicId: rest.slice(0, slash), partition }
}
