/**
 * Which partition of `__consumer_offsets` and `__transaction_state` a group id and a transactional
 * id are written to, ferrolog against Apache Kafka 4.4 in the same test (tools/kafka/run-broker.sh
 * with 50 partitions of each, Kafka's default): for each key, one OffsetCommit (a simple commit,
 * generation -1) or one InitProducerId, and ListOffsets over the topic's 50 partitions before
 * and after tells which partition it grew. Both brokers pick the same partition for every key,
 * Kafka's `Utils.abs(key.hashCode()) % 50` (ts/coordinator/partition-for.ts). And both describe
 * the internal topics' own configs alike (kafka-configs --describe).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { TRANSACTION_STATE_TOPIC } from '../../ts/coordinator/transaction/transaction-log.js'
import { OFFSETS_TOPIC } from '../../ts/group/offsets-topic.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, kafkaBrokerPort, KafkaTool, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'

const TOPIC = 'events'
const PARTITIONS = 50
const GROUPS = ['polygenelubricants', 'g', 'orders', 'groupé', '消费者组', ...Array.from({ length: 25 }, (_, i) => `billing-consumers-${i * 7}`)]
const TXN_IDS = ['txn', 'émetteur-1', 'DESIGNING WORKHOUSES', ...Array.from({ length: 25 }, (_, i) => `ledger-writer-${i * 13}`)]

let kafkaDir: string
let ferrologDir: string
let ferrolog: Broker | undefined
const ports: Record<'kafka' | 'ferrolog', number> = { kafka: 0, ferrolog: 0 }
const BROKERS = ['kafka', 'ferrolog'] as const

beforeAll(async () => {
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-coord-partitions-'))
  ports.kafka = kafkaBrokerPort(await runKafkaBroker(kafkaDir, ['--set', `offsets.topic.num.partitions=${PARTITIONS}`, '--set', `transaction.state.log.num.partitions=${PARTITIONS}`]))
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-coord-partitions-vs-kafka-'))
  ferrolog = await startBroker({ dataDir: ferrologDir })
  ports.ferrolog = ferrolog.port
  for (const b of BROKERS) await kafkaToolOk(ports[b], KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1'])
}, 300_000)

afterAll(async () => {
  try {
    await ferrolog?.stop()
  } finally {
    if (ferrologDir) rmSync(ferrologDir, { recursive: true, force: true })
    if (kafkaDir) {
      stopKafkaBroker(kafkaDir)
      rmSync(kafkaDir, { recursive: true, force: true })
    }
  }
}, 120_000)

/** The errors a client retries on (Kafka answers NOT_COORDINATOR for a partition it has not loaded yet). */
const RETRIABLE = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE])

/** `send` again while it answers a retriable coordinator error; the last error code. */
async function retried(send: () => Promise<number>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const errorCode = await send()
    if (!RETRIABLE.has(errorCode) || attempt === 300) return errorCode
    await sleep(100)
  }
}

/** Until FindCoordinator answers for `key` (Kafka makes the topic on the first one). */
async function coordinatorReady(wire: KafkaWire, keyType: number, key: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const r = await wire.send(findCoordinatorCodec, 4, { key: '', keyType, coordinatorKeys: [key] })
    if (r.coordinators[0]!.errorCode === ErrorCode.NONE) return
    await sleep(100)
  }
  throw new Error(`no coordinator for ${key}`)
}

/** The end offset (high watermark) of each partition of `topic`. */
async function endOffsets(wire: KafkaWire, topic: string): Promise<bigint[]> {
  for (let attempt = 0; ; attempt++) {
    const r = await wire.send(listOffsetsCodec, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 })) }],
    })
    const parts = r.topics[0]!.partitions
    if (parts.every((p) => p.errorCode === ErrorCode.NONE)) return [...parts].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.offset)
    if (attempt === 100) throw new Error(`ListOffsets ${topic}: ${parts.map((p) => p.errorCode).join(',')}`)
    await sleep(100)
  }
}

/** The partitions `write` made `topic` grow, for each key (waiting a little for the high watermark). */
async function grown(wire: KafkaWire, topic: string, keys: readonly string[], write: (key: string) => Promise<void>): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>()
  let before = await endOffsets(wire, topic)
  for (const key of keys) {
    await write(key)
    let after = before
    for (let attempt = 0; attempt < 50; attempt++) {
      after = await endOffsets(wire, topic)
      if (after.some((o, p) => o !== before[p])) break
      await sleep(50)
    }
    out.set(
      key,
      after.flatMap((o, p) => (o !== before[p] ? [p] : [])),
    )
    before = after
  }
  return out
}

describe('coordinator partitions, ferrolog as Apache Kafka 4.4', () => {
  it('writes each group id and transactional id to the same partition of its 50 as Kafka', async () => {
    const placed: Record<string, { groups: Map<string, number[]>; txns: Map<string, number[]> }> = {}
    for (const b of BROKERS) {
      const wire = new KafkaWire(await connectTo(ports[b]), 'coordinator-partitions')
      try {
        await coordinatorReady(wire, CoordinatorType.GROUP, GROUPS[0]!)
        await coordinatorReady(wire, CoordinatorType.TRANSACTION, TXN_IDS[0]!)
        const groups = await grown(wire, OFFSETS_TOPIC, GROUPS, async (group) => {
          const errorCode = await retried(async () => {
            const r = await wire.send(offsetCommitCodec, 8, {
              groupId: group,
              generationIdOrMemberEpoch: -1,
              memberId: '',
              groupInstanceId: null,
              retentionTimeMs: -1n,
              topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: null }] }],
            })
            return r.topics[0]!.partitions[0]!.errorCode
          })
          expect(errorCode, `${b} ${group}`).toBe(ErrorCode.NONE)
        })
        const txns = await grown(wire, TRANSACTION_STATE_TOPIC, TXN_IDS, async (id) => {
          const errorCode = await retried(async () => (await wire.send(initProducerIdCodec, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })).errorCode)
          expect(errorCode, `${b} ${id}`).toBe(ErrorCode.NONE)
        })
        placed[b] = { groups, txns }
      } finally {
        wire.close()
      }
    }
    const expectedGroups = new Map(GROUPS.map((g) => [g, [partitionFor(g, PARTITIONS)]]))
    const expectedTxns = new Map(TXN_IDS.map((id) => [id, [partitionFor(id, PARTITIONS)]]))
    expect(placed.kafka!.groups).toEqual(expectedGroups)
    expect(placed.kafka!.txns).toEqual(expectedTxns)
    expect(placed.ferrolog!.groups).toEqual(placed.kafka!.groups)
    expect(placed.ferrolog!.txns).toEqual(placed.kafka!.txns)
  }, 300_000)

  it("describes the internal topics' own configs as Kafka (kafka-configs --describe)", async () => {
    /** The configs `kafka-configs --describe` shows as the topic's own (DYNAMIC_TOPIC_CONFIG), `name=value`. */
    const own = async (port: number, topic: string) => {
      const out = await kafkaToolOk(port, KafkaTool.CONFIGS, ['--describe', '--entity-type', 'topics', '--entity-name', topic])
      return [...out.matchAll(/^\s+(\S+=\S*) sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:/gm)].map((m) => m[1]!).sort()
    }
    const described: Record<string, Record<string, string[]>> = {}
    for (const b of BROKERS) {
      const wire = new KafkaWire(await connectTo(ports[b]), 'internal-topic-configs')
      try {
        // Kafka makes each internal topic at the first FindCoordinator for it.
        await coordinatorReady(wire, CoordinatorType.GROUP, 'configs-group')
        await coordinatorReady(wire, CoordinatorType.TRANSACTION, 'configs-txn')
      } finally {
        wire.close()
      }
      described[b] = { [OFFSETS_TOPIC]: await own(ports[b], OFFSETS_TOPIC), [TRANSACTION_STATE_TOPIC]: await own(ports[b], TRANSACTION_STATE_TOPIC) }
    }
    expect(described.kafka![OFFSETS_TOPIC]).toEqual(['cleanup.policy=compact', 'compression.type=producer', 'segment.bytes=104857600'])
    expect(described.ferrolog![OFFSETS_TOPIC]).toEqual(described.kafka![OFFSETS_TOPIC])
    // Kafka records transaction.state.log.min.isr as the topic's min.insync.replicas; ferrolog has no such setting.
    expect(described.kafka![TRANSACTION_STATE_TOPIC]).toContain('min.insync.replicas=1')
    expect(described.ferrolog![TRANSACTION_STATE_TOPIC]).toEqual(described.kafka![TRANSACTION_STATE_TOPIC].filter((c) => !c.startsWith('min.insync.replicas=')))
    expect(described.ferrolog![TRANSACTION_STATE_TOPIC]).toEqual(['cleanup.policy=compact', 'compression.type=uncompressed', 'segment.bytes=104857600', 'unclean.leader.election.enable=false'])
  }, 300_000)
})
