/**
 * Issue 28 item 3: the share coordinator's inter-broker requests (InitializeShareGroupState,
 * ReadShareGroupState, WriteShareGroupState, ReadShareGroupStateSummary,
 * DeleteShareGroupState) over a raw socket, the same requests to ferrolog and to Apache Kafka 4.4,
 * the same answers: the versions each serves (ApiVersions), FindCoordinator for a share key, the
 * error codes (uninitialized share partition, negative epochs, fenced leader epoch, unknown topic;
 * messages are not compared) and the state read back (start offset, state epoch, the state
 * batches as the coordinator merged them).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { deleteShareGroupStateCodec } from '../../ts/protocol/apis/delete-share-group-state.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { initializeShareGroupStateCodec } from '../../ts/protocol/apis/initialize-share-group-state.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { readShareGroupStateCodec } from '../../ts/protocol/apis/read-share-group-state.js'
import { readShareGroupStateSummaryCodec } from '../../ts/protocol/apis/read-share-group-state-summary.js'
import { writeShareGroupStateCodec } from '../../ts/protocol/apis/write-share-group-state.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { defaultMetadataRequest } from '../../ts/protocol/messages/metadata-request.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const GROUP = 'states'
const TOPIC = 'queue'
const ACKNOWLEDGED = 2
const AVAILABLE = 0

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

const RETRIABLE: readonly number[] = [ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE]
const batch = (first: number, last: number, deliveryState: number, deliveryCount: number) => ({ firstOffset: BigInt(first), lastOffset: BigInt(last), deliveryState, deliveryCount })

async function scenario(port: number): Promise<Record<string, unknown>> {
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1'])
  const wire = new KafkaWire(await connectTo(port), 'share-state')
  const out: Record<string, unknown> = {}
  try {
    const versions = await wire.send(apiVersionsCodec, 2, { clientSoftwareName: 'share-state', clientSoftwareVersion: '1' })
    out.versions = versions.apiKeys.filter((k) => k.apiKey >= 83 && k.apiKey <= 87).map((k) => `${k.apiKey}:v${k.minVersion}-v${k.maxVersion}`)
    const meta = await wire.send(metadataCodec, 12, { ...defaultMetadataRequest(), topics: [{ name: TOPIC, topicId: Buffer.alloc(16) }] })
    const topicId = meta.topics[0]!.topicId
    const key = `${GROUP}:${topicId.toString('base64url')}:0`
    // The share key's coordinator (Kafka creates __share_group_state on this).
    let found = -1
    for (let i = 0; i < 300 && found !== ErrorCode.NONE; i++) {
      if (i > 0) await sleep(100)
      found = (await wire.send(findCoordinatorCodec, 6, { key: '', keyType: 2, coordinatorKeys: [key] })).coordinators[0]!.errorCode
    }
    out.findCoordinator = found
    out.findCoordinatorBadKey = (await wire.send(findCoordinatorCodec, 6, { key: '', keyType: 2, coordinatorKeys: ['not-a-share-key'] })).coordinators[0]!.errorCode

    const read = (leaderEpoch: number, id = topicId) =>
      wire.send(readShareGroupStateCodec, 0, { groupId: GROUP, topics: [{ topicId: id, partitions: [{ partition: 0, leaderEpoch }] }] }).then((r) => r.results[0]!.partitions[0]!)
    const write = (stateEpoch: number, leaderEpoch: number, startOffset: number, stateBatches: ReturnType<typeof batch>[]) =>
      wire
        .send(writeShareGroupStateCodec, 1, {
          groupId: GROUP,
          topics: [{ topicId, partitions: [{ partition: 0, stateEpoch, leaderEpoch, startOffset: BigInt(startOffset), deliveryCompleteCount: 0, stateBatches }] }],
        })
        .then((r) => r.results[0]!.partitions[0]!.errorCode)
    const initialize = (stateEpoch: number, startOffset: number, id = topicId) =>
      wire
        .send(initializeShareGroupStateCodec, 0, { groupId: GROUP, topics: [{ topicId: id, partitions: [{ partition: 0, stateEpoch, startOffset: BigInt(startOffset) }] }] })
        .then((r) => r.results[0]!.partitions[0]!.errorCode)

    // Until the coordinator has loaded the partition: its retriable answers.
    let first = await read(0)
    for (let i = 0; i < 300 && RETRIABLE.includes(first.errorCode); i++) {
      await sleep(100)
      first = await read(0)
    }
    out.readUninitialized = first.errorCode
    out.writeUninitialized = await write(0, 0, 0, [])
    out.initializeNegativeStateEpoch = await initialize(-1, 5)
    out.initializeUnknownTopic = await initialize(0, 5, Buffer.from('00112233445566778899aabbccddeeff', 'hex'))
    out.initialize = await initialize(0, 5)
    const afterInit = await read(1)
    out.readAfterInitialize = { errorCode: afterInit.errorCode, stateEpoch: afterInit.stateEpoch, startOffset: afterInit.startOffset, stateBatches: afterInit.stateBatches }
    out.write = await write(0, 1, 5, [batch(5, 9, ACKNOWLEDGED, 1), batch(10, 12, AVAILABLE, 2)])
    out.writeOverlapping = await write(0, 1, 7, [batch(11, 11, ACKNOWLEDGED, 2)])
    out.writeFencedLeaderEpoch = await write(0, 0, 5, [])
    out.writeNegativeStateEpoch = await write(-1, 1, 5, [])
    const afterWrite = await read(1)
    out.readAfterWrite = { errorCode: afterWrite.errorCode, stateEpoch: afterWrite.stateEpoch, startOffset: afterWrite.startOffset, stateBatches: afterWrite.stateBatches }
    out.readFencedLeaderEpoch = (await read(0)).errorCode
    out.readNegativeLeaderEpoch = (await read(-1)).errorCode
    const summary = (await wire.send(readShareGroupStateSummaryCodec, 1, { groupId: GROUP, topics: [{ topicId, partitions: [{ partition: 0, leaderEpoch: 1 }] }] })).results[0]!.partitions[0]!
    out.summary = { errorCode: summary.errorCode, stateEpoch: summary.stateEpoch, leaderEpoch: summary.leaderEpoch, startOffset: summary.startOffset }
    out.delete = (await wire.send(deleteShareGroupStateCodec, 0, { groupId: GROUP, topics: [{ topicId, partitions: [{ partition: 0 }] }] })).results[0]!.partitions[0]!.errorCode
    out.readAfterDelete = (await read(1)).errorCode
  } finally {
    wire.close()
  }
  return out
}

const expected = {
  versions: ['83:v0-v0', '84:v0-v0', '85:v0-v1', '86:v0-v0', '87:v0-v1'],
  findCoordinator: ErrorCode.NONE,
  findCoordinatorBadKey: ErrorCode.INVALID_REQUEST,
  readUninitialized: ErrorCode.INVALID_REQUEST,
  writeUninitialized: ErrorCode.INVALID_REQUEST,
  initializeNegativeStateEpoch: ErrorCode.INVALID_REQUEST,
  initializeUnknownTopic: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  initialize: ErrorCode.NONE,
  readAfterInitialize: { errorCode: ErrorCode.NONE, stateEpoch: 0, startOffset: 5n, stateBatches: [] },
  write: ErrorCode.NONE,
  writeOverlapping: ErrorCode.NONE,
  writeFencedLeaderEpoch: ErrorCode.FENCED_LEADER_EPOCH,
  writeNegativeStateEpoch: ErrorCode.INVALID_REQUEST,
  readAfterWrite: {
    errorCode: ErrorCode.NONE,
    stateEpoch: 0,
    startOffset: 7n,
    stateBatches: [batch(7, 9, ACKNOWLEDGED, 1), batch(10, 10, AVAILABLE, 2), batch(11, 11, ACKNOWLEDGED, 2), batch(12, 12, AVAILABLE, 2)],
  },
  readFencedLeaderEpoch: ErrorCode.FENCED_LEADER_EPOCH,
  readNegativeLeaderEpoch: ErrorCode.INVALID_REQUEST,
  summary: { errorCode: ErrorCode.NONE, stateEpoch: 0, leaderEpoch: 1, startOffset: 7n },
  delete: ErrorCode.NONE,
  readAfterDelete: ErrorCode.INVALID_REQUEST,
}

describe('share coordinator requests: ferrolog and Apache Kafka 4.4 answer alike', () => {
  it('ferrolog', async () => {
    broker = await startBroker()
    expect(await scenario(broker.port)).toEqual(expected)
  }, 120_000)

  it('Apache Kafka 4.4 (the reference)', async () => {
    kafkaDir = tempDir('kafka-share-state-')
    const port = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
    expect(await scenario(port)).toEqual(expected)
  }, 300_000)
})
