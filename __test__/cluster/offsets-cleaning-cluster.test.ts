/**
 * `__consumer_offsets` compacted in a cluster of broker processes on etcd: OffsetCommits (of an
 * Empty group, to the coordinator) pile up, every replica's log cleaner cleans its own copy (its
 * cleaner-offset-checkpoint moves on, on leader and followers);
 * the coordinator's broker is SIGKILLed and the new leader's coordinator loads its cleaned copy:
 * every committed offset is there, through kafkajs. The killed broker comes back over its
 * cleaned log.
 */
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel, type Admin } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { ClusterProcesses } from '../helpers/cluster-processes.js'

let cluster: ClusterProcesses | undefined
const admins: Admin[] = []
let client: NetworkClient | undefined

afterEach(async () => {
  await client?.close()
  client = undefined
  for (const a of admins.splice(0)) await a.disconnect().catch(() => undefined)
  await cluster?.close()
  cluster = undefined
})

const GROUP = 'cleaned-group'
const TOPIC = 'jobs'
const PARTITIONS = 3
const ROUNDS = 80

/** Small offsets-log segments and a cleaner that cleans anything dirty, quickly. */
const CLEANING = { 'offsets.topic.segment.bytes': '2048', 'log.cleaner.backoff.ms': '50', 'log.cleaner.min.cleanable.ratio': '0.01' }

async function admin(address: string): Promise<Admin> {
  const a = new Kafka({ clientId: 'offsets-cleaning', brokers: address.split(','), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } }).admin()
  admins.push(a)
  await a.connect()
  return a
}

/** The group's partition of __consumer_offsets (Kafka's Utils.abs(GROUP.hashCode()) % 50). */
const OFFSETS_PARTITION = partitionFor(GROUP, 50)

/** A broker's checkpointed first dirty offset of the group's partition of __consumer_offsets (0: never cleaned). */
function cleanerCheckpoint(dataDir: string): number {
  const file = join(dataDir, 'cleaner-offset-checkpoint')
  if (!existsSync(file)) return 0
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`__consumer_offsets ${OFFSETS_PARTITION} `))
  return line ? Number(line.split(' ')[2]) : 0
}

/** The group's coordinator as `address`'s broker tells it (FindCoordinator v3); undefined while none. */
async function findCoordinator(address: string): Promise<number | undefined> {
  const c = await NetworkClient.connect(address)
  try {
    const r = await c.send(findCoordinatorCodec, 3, { key: GROUP, keyType: 0, coordinatorKeys: [] })
    return r.errorCode === ErrorCode.NONE ? r.nodeId : undefined
  } finally {
    await c.close()
  }
}

async function committed(a: Admin): Promise<Array<[number, string]>> {
  const [topic] = await a.fetchOffsets({ groupId: GROUP, topics: [TOPIC] })
  return topic.partitions.map((p): [number, string] => [p.partition, p.offset]).sort((x, y) => x[0] - y[0])
}

describe('__consumer_offsets cleaned in a cluster', () => {
  it('every replica cleans its copy; after the coordinator is SIGKILLed the new one loads every committed offset from its cleaned log', async () => {
    const c = (cluster = await ClusterProcesses.start({ brokers: 3, props: CLEANING }))
    await c.createTopic(TOPIC, { partitions: PARTITIONS, replicationFactor: 3 })
    const a = await admin(c.bootstrap)
    // The first look-up creates __consumer_offsets (FindCoordinator); its leader coordinates.
    const none = await c.until('a coordinator answers', async () => await committed(a))
    expect(none).toEqual(Array.from({ length: PARTITIONS }, (_, p) => [p, '-1']))
    const coordinator = await c.until('the coordinator', () => findCoordinator(c.nodes[0].address))
    client = await NetworkClient.connect(c.node(coordinator).address)
    // Commits of an Empty group (generation -1), as kafka-consumer-groups --reset-offsets makes them.
    for (let round = 1; round <= ROUNDS; round++) {
      const response = await client.send(offsetCommitCodec, 8, {
        groupId: GROUP,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [
          {
            name: TOPIC,
            partitions: Array.from({ length: PARTITIONS }, (_, p) => ({ partitionIndex: p, committedOffset: BigInt(round * 10 + p), committedLeaderEpoch: -1, committedMetadata: null })),
          },
        ],
      })
      expect(response.topics[0].partitions.map((p) => p.errorCode)).toEqual(Array(PARTITIONS).fill(ErrorCode.NONE))
    }
    const expected = Array.from({ length: PARTITIONS }, (_, p): [number, string] => [p, String(ROUNDS * 10 + p)])
    expect(await committed(a)).toEqual(expected)
    // ROUNDS batches of PARTITIONS records: every replica's cleaner moves well past the first half.
    await c.until('every replica cleaned its offsets log', async () => c.nodes.every((n) => cleanerCheckpoint(n.dataDir) >= (ROUNDS * PARTITIONS) / 2), 60_000)

    const leader = coordinator
    await client.close()
    client = undefined
    await c.node(leader).kill()
    const survivor = c.nodes.find((n) => n.nodeId !== leader)!
    await c.until('a new coordinator', async () => {
      const l = await findCoordinator(survivor.address)
      return l !== undefined && l !== leader
    })
    const b = await admin(survivor.address)
    await c.until('the new coordinator answers with every committed offset', async () => {
      try {
        return JSON.stringify(await committed(b)) === JSON.stringify(expected)
      } catch {
        return false
      }
    })
    expect(await committed(b)).toEqual(expected)

    // The killed broker recovers its cleaned copy and rejoins; through it the offsets are the same.
    await c.node(leader).start()
    const back = await admin(c.node(leader).address)
    await c.until('the restarted broker answers', async () => JSON.stringify(await committed(back)) === JSON.stringify(expected))
    expect(c.unexpectedExits()).toEqual([])
  }, 180_000)
})
