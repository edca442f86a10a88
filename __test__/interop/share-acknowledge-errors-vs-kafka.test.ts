/**
 * Issue 28 item 2, bad input: ShareFetch and ShareAcknowledge over a raw socket, the same
 * requests to ferrolog and to Apache Kafka 4.4, the same answers (error codes; messages differ).
 * Two members of one share group (share.record.lock.duration.ms 2 s) each acquire five of ten
 * records (acquire mode record_limit, so Kafka acquires exactly maxRecords too), then:
 *
 * - A acknowledges B's record: INVALID_RECORD_STATE; a batch reaching past the in-flight
 *   records, one wholly past them, an unknown acknowledge type: INVALID_REQUEST;
 * - a stale session epoch, epoch 0 on ShareAcknowledge, a ShareFetch with a wrong epoch:
 *   INVALID_SHARE_SESSION_EPOCH; a member without a session: SHARE_SESSION_NOT_FOUND;
 * - nothing of that changed state: A and B then accept records they hold;
 * - A's lock expires: B's parked ShareFetch gets A's other records with delivery count 2, and A's
 *   late acknowledgement of them is INVALID_RECORD_STATE; B accepts them; an acknowledgement of
 *   an offset below the share-partition start offset is skipped (no error); nothing is left.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { shareAcknowledgeCodec } from '../../ts/protocol/apis/share-acknowledge.js'
import { shareFetchCodec, type ShareFetchResponse } from '../../ts/protocol/apis/share-fetch.js'
import { shareGroupHeartbeatCodec } from '../../ts/protocol/apis/share-group-heartbeat.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const GROUP = 'acks'
const TOPIC = 'tasks'
const A = 'AAAAAAAAAAAAAAAAAAAAAA'
const B = 'BBBBBBBBBBBBBBBBBBBBBB'
const MIN_LOCK = { 'group.share.min.record.lock.duration.ms': '1000' }
const ACCEPT = 1
const RECORD_LIMIT = 1

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

type Batch = { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }
const batch = (first: number, last: number, type = ACCEPT): Batch => ({ firstOffset: BigInt(first), lastOffset: BigInt(last), acknowledgeTypes: [type] })
const acquired = (r: ShareFetchResponse<Buffer | null>) => r.responses.flatMap((t) => t.partitions.flatMap((p) => p.acquiredRecords.map((a) => `${a.firstOffset}-${a.lastOffset}@${a.deliveryCount}`)))

async function scenario(port: number): Promise<Record<string, unknown>> {
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1'])
  await kafkaToolOk(port, KafkaTool.CONFIGS, ['--alter', '--entity-type', 'groups', '--entity-name', GROUP, '--add-config', 'share.auto.offset.reset=earliest,share.record.lock.duration.ms=2000'])
  const wire = new KafkaWire(await connectTo(port), 'share-acks')
  try {
    const records = buildBatch(Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`r${i}`) })))
    for (let attempt = 0; ; attempt++) {
      const res = await wire.send(produceCodec, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] })
      const errorCode = res.responses[0]!.partitionResponses[0]!.errorCode
      if (errorCode === ErrorCode.NONE) break
      if (attempt === 50) throw new Error(`produce: ${errorCode}`)
      await sleep(100)
    }
    for (let i = 0; i < 100; i++) {
      const r = await wire.send(findCoordinatorCodec, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] })
      if (r.coordinators.every((c) => c.errorCode === ErrorCode.NONE)) break
      await sleep(200)
    }
    // Both members join and are given the partition (Kafka first initializes its share state).
    let topicId: Buffer | undefined
    for (const member of [A, B]) {
      let epoch = 0
      for (let i = 0; i < 600; i++) {
        const r = await wire.send(shareGroupHeartbeatCodec, 1, { groupId: GROUP, memberId: member, memberEpoch: epoch, rackId: null, subscribedTopicNames: epoch === 0 ? [TOPIC] : null })
        if (r.errorCode === ErrorCode.NONE) epoch = r.memberEpoch
        const assigned = r.assignment?.topicPartitions[0]
        if (assigned !== undefined && assigned.partitions.length > 0) {
          topicId = assigned.topicId
          break
        }
        await sleep(200)
      }
    }
    if (topicId === undefined) throw new Error('no assignment')
    const tid = topicId

    const epochs = new Map<string, number>([
      [A, 0],
      [B, 0],
    ])
    /** A ShareFetch of the member's session (its epoch moves on when the answer has no top-level error). */
    const shareFetch = async (member: string, maxRecords: number, acks: Batch[] = [], epoch = epochs.get(member)!, maxWaitMs = 500) => {
      const r = await wire.send(shareFetchCodec, 2, {
        groupId: GROUP,
        memberId: member,
        shareSessionEpoch: epoch,
        maxWaitMs,
        minBytes: 1,
        maxBytes: 1 << 20,
        maxRecords,
        batchSize: maxRecords,
        shareAcquireMode: RECORD_LIMIT,
        isRenewAck: false,
        topics: [{ topicId: tid, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: acks }] }],
        forgottenTopicsData: [],
      })
      if (r.errorCode === ErrorCode.NONE && epoch === epochs.get(member)) epochs.set(member, epoch + 1)
      return r
    }
    /** Fetches until something is acquired (a new share partition may answer nothing at first). */
    const fetchUntilAcquired = async (member: string, maxRecords: number) => {
      for (let i = 0; i < 100; i++) {
        const r = await shareFetch(member, maxRecords)
        if (r.errorCode !== ErrorCode.NONE || acquired(r).length > 0) return { errorCode: r.errorCode, acquired: acquired(r) }
      }
      throw new Error(`${member} acquired nothing`)
    }
    /** A ShareAcknowledge: the top-level code, and each partition's. */
    const ack = async (member: string, acks: Batch[], epoch = epochs.get(member)!) => {
      const r = await wire.send(shareAcknowledgeCodec, 2, {
        groupId: GROUP,
        memberId: member,
        shareSessionEpoch: epoch,
        isRenewAck: false,
        topics: [{ topicId: tid, partitions: [{ partitionIndex: 0, acknowledgementBatches: acks }] }],
      })
      if (r.errorCode === ErrorCode.NONE && epoch === epochs.get(member)) epochs.set(member, epoch + 1)
      return [r.errorCode, ...r.responses.flatMap((t) => t.partitions.map((p) => p.errorCode))]
    }

    const seen: Record<string, unknown> = {}
    seen.acquiredA = await fetchUntilAcquired(A, 5)
    seen.acquiredB = await fetchUntilAcquired(B, 5)
    seen.othersRecord = await ack(A, [batch(5, 5)])
    seen.pastInFlight = await ack(A, [batch(3, 12)])
    seen.farPastInFlight = await ack(A, [batch(20, 21)])
    seen.unknownType = await ack(A, [batch(0, 1, 7)])
    seen.staleEpoch = await ack(A, [batch(0, 1)], epochs.get(A)! - 1)
    seen.epochZero = await ack(A, [batch(0, 1)], 0)
    seen.noSession = await ack('CCCCCCCCCCCCCCCCCCCCCC', [batch(0, 1)], 1)
    seen.fetchWrongEpoch = (await shareFetch(A, 5, [], 42)).errorCode
    // Nothing changed: each still holds its records.
    seen.acceptA = await ack(A, [batch(0, 1)])
    seen.acceptB = await ack(B, [batch(5, 9)])
    // A's lock expires: B's fetches get A's other records (parked until then), delivery count 2
    // (Kafka expires them offset by offset once A acknowledged some of the batch: several fetches).
    const redelivered: string[] = []
    while (redelivered.length < 3) {
      const r = await fetchUntilAcquired(B, 10)
      if (r.errorCode !== ErrorCode.NONE) throw new Error(`B's fetch: ${r.errorCode}`)
      for (const range of r.acquired) {
        const [, first, last, count] = /^(\d+)-(\d+)@(\d+)$/.exec(range)!
        for (let o = Number(first); o <= Number(last); o++) redelivered.push(`${o}@${count}`)
      }
    }
    seen.redeliveredToB = redelivered.sort()
    seen.lateAckA = await ack(A, [batch(2, 4)])
    seen.acceptRedelivered = await ack(B, [batch(2, 4)])
    seen.belowStartOffset = await ack(B, [batch(9, 9)])
    seen.nothingLeft = acquired(await shareFetch(A, 10, [], epochs.get(A)!, 0))
    return seen
  } finally {
    wire.close()
  }
}

const expected = {
  acquiredA: { errorCode: 0, acquired: ['0-4@1'] },
  acquiredB: { errorCode: 0, acquired: ['5-9@1'] },
  othersRecord: [0, ErrorCode.INVALID_RECORD_STATE],
  pastInFlight: [0, ErrorCode.INVALID_REQUEST],
  farPastInFlight: [0, ErrorCode.INVALID_REQUEST],
  unknownType: [0, ErrorCode.INVALID_REQUEST],
  staleEpoch: [ErrorCode.INVALID_SHARE_SESSION_EPOCH],
  epochZero: [ErrorCode.INVALID_SHARE_SESSION_EPOCH],
  noSession: [ErrorCode.SHARE_SESSION_NOT_FOUND],
  fetchWrongEpoch: ErrorCode.INVALID_SHARE_SESSION_EPOCH,
  acceptA: [0, 0],
  acceptB: [0, 0],
  redeliveredToB: ['2@2', '3@2', '4@2'],
  lateAckA: [0, ErrorCode.INVALID_RECORD_STATE],
  acceptRedelivered: [0, 0],
  belowStartOffset: [0, 0],
  nothingLeft: [],
}

describe('KIP-932 bad acknowledgements and share session epochs, on the wire', () => {
  it('ferrolog', async () => {
    broker = await startBroker({ props: MIN_LOCK })
    expect(await scenario(broker.port)).toEqual(expected)
  }, 120_000)

  it('Apache Kafka 4.4 (the reference)', async () => {
    kafkaDir = tempDir('kafka-share-acks-')
    const port = kafkaBrokerPort(
      await runKafkaBroker(
        kafkaDir,
        Object.entries(MIN_LOCK).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      ),
    )
    expect(await scenario(port)).toEqual(expected)
  }, 200_000)
})
