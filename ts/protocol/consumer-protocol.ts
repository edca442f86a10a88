/**
 * The consumer protocol: the bytes that Kafka consumers (protocolType "consumer") put in
 * JoinGroup's protocol metadata and SyncGroup's assignments. The broker passes them through
 * unread; tests, and checkers of what range or round-robin assignors hand out, read them here.
 *
 * Both are a version int16 followed by the fields of that version, never flexible, as in
 * Kafka's ConsumerProtocolSubscription.json / ConsumerProtocolAssignment.json:
 *
 *   subscription  topics []string, userData nullable bytes,
 *                 ownedPartitions [topic, partitions []int32] (v1+), generationId int32 (v2+),
 *                 rackId nullable string (v3+)
 *   assignment    assignedPartitions [topic, partitions []int32], userData nullable bytes
 *                 (v0-v3 alike: v2 and v3 only follow the subscription's versions)
 *
 * Like Kafka, a newer version than we know is read with the fields we know (later versions may
 * only append fields), and bytes after them are ignored.
 */
import { ProtocolError } from './protocol-error.js'
import { Reader } from './reader.js'
import { Writer } from './writer.js'

/** The protocolType of groups of Kafka consumers. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer'

/** The newest version of the subscription and of the assignment. */
export const CONSUMER_PROTOCOL_MAX_VERSION = 3

/** Kafka's TopicPartition of these two schemas: one topic and some of its partitions. */
export interface ConsumerProtocolTopicPartition {
  topic: string
  partitions: number[]
}

export interface ConsumerProtocolSubscription {
  topics: string[]
  userData: Buffer | null
  /** v1+; [] before. */
  ownedPartitions: ConsumerProtocolTopicPartition[]
  /** v2+; -1 before. */
  generationId: number
  /** v3+; null before. */
  rackId: string | null
}

export interface ConsumerProtocolAssignment {
  assignedPartitions: ConsumerProtocolTopicPartition[]
  userData: Buffer | null
}

/** What was read, with the version it was written in. */
export interface Versioned<T> {
  version: number
  value: T
}

function checkVersion(version: number): void {
  if (!Number.isInteger(version) || version < 0 || version > CONSUMER_PROTOCOL_MAX_VERSION) {
    throw new Error(`consumer protocol version ${version} is not one of 0-${CONSUMER_PROTOCOL_MAX_VERSION}`)
  }
}

function readVersion(r: Reader, what: string): number {
  const version = r.int16()
  if (version < 0) throw new ProtocolError(`unsupported ${what} version ${version}`)
  return version
}

function readTopicPartition(r: Reader): ConsumerProtocolTopicPartition {
  return { topic: r.string(), partitions: r.array((r) => r.int32()) }
}

function writeTopicPartition(w: Writer, tp: ConsumerProtocolTopicPartition): void {
  w.string(tp.topic)
  w.array(tp.partitions, (w, p) => w.int32(p))
}

export function encodeSubscription(subscription: ConsumerProtocolSubscription, version = CONSUMER_PROTOCOL_MAX_VERSION): Buffer {
  checkVersion(version)
  const w = new Writer()
  w.int16(version)
  w.array(subscription.topics, (w, t) => w.string(t))
  w.nullableBytes(subscription.userData)
  if (version >= 1) w.array(subscription.ownedPartitions, writeTopicPartition)
  if (version >= 2) w.int32(subscription.generationId)
  if (version >= 3) w.nullableString(subscription.rackId)
  return w.finish()
}

export function decodeSubscription(data: Buffer): Versioned<ConsumerProtocolSubscription> {
  const r = new Reader(data)
  const version = readVersion(r, 'subscription')
  const value: ConsumerProtocolSubscription = {
    topics: r.array((r) => r.string()),
    userData: r.nullableBytes(),
    ownedPartitions: version >= 1 ? r.array(readTopicPartition) : [],
    generationId: version >= 2 ? r.int32() : -1,
    rackId: version >= 3 ? r.nullableString() : null,
  }
  return { version, value }
}

/**
 * The topics of a subscription, read as the group coordinator reads them (Kafka's
 * `computeSubscribedTopics`): only the v0 prefix that every version starts with (version >= 0,
 * topics, userData), so that a version newer than any known still parses. Throws a
 * ProtocolError when even that does not.
 */
export function decodeSubscriptionTopics(data: Buffer): string[] {
  const r = new Reader(data)
  readVersion(r, 'subscription')
  const topics = r.array((r) => r.string())
  r.nullableBytes()
  return topics
}

export function encodeAssignment(assignment: ConsumerProtocolAssignment, version = CONSUMER_PROTOCOL_MAX_VERSION): Buffer {
  checkVersion(version)
  const w = new Writer()
  w.int16(version)
  w.array(assignment.assignedPartitions, writeTopicPartition)
  w.nullableBytes(assignment.userData)
  return w.finish()
}

export function decodeAssignment(data: Buffer): Versioned<ConsumerProtocolAssignment> {
  const r = new Reader(data)
  const version = readVersion(r, 'assignment')
  const value: ConsumerProtocolAssignment = {
    assignedPartitions: r.array(readTopicPartition),
    userData: r.nullableBytes(),
  }
  return { version, value }
}
