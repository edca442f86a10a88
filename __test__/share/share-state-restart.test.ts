/**
 * Issue 28 item 3: a share partition's state survives a SIGKILL of the broker process. A real
 * `ferrolog broker` process, a share group read over real sockets with ShareFetch and
 * ShareAcknowledge; in the middle the process is SIGKILLed (no clean shutdown) and started again
 * on the same data dir. Afterwards:
 *
 * - no accepted or rejected record is delivered again;
 * - records released before the kill come back with their delivery count kept (1 before, 2 on
 *   the next delivery), records acquired and not acknowledged at the kill are available again
 *   with the count they had before that acquisition (never written, as in Kafka);
 * - the share-partition start offset is as before (ReadShareGroupStateSummary, the share
 *   coordinator's answer), and records produced later are delivered too.
 *
 * Locks last 10 minutes, longer than the test: none expires meanwhile.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { readShareGroupStateSummaryCodec } from '../../ts/protocol/apis/read-share-group-state-summary.js'
import { shareAcknowledgeCodec } from '../../ts/protocol/apis/share-acknowledge.js'
import { shareFetchCodec, type ShareFetchResponse } from '../../ts/protocol/apis/share-fetch.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { defaultMetadataRequest } from '../../ts/protocol/messages/metadata-request.js'
import { createTopicOn, spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

const ACCEPT = 1
const RELEASE = 2
const REJECT = 3
const PROPS = { 'group.share.record.lock.duration.ms': '600000' }

const processes: BrokerProcess[] = []
const wires: KafkaWire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  for (const p of processes.splice(0)) await p.stop()
})

const acquired = (r: ShareFetchResponse<Buffer | null>) => r.responses.flatMap((t) => t.partitions.flatMap((p) => p.acquiredRecords.map((a) => `${a.firstOffset}-${a.lastOffset}@${a.deliveryCount}`)))

function values(from: number, n: number) {
  return Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`job-${from + i}`), timestamp: BigInt(Date.now()) }))
}

async function wireTo(port: number): Promise<KafkaWire> {
  const w = new KafkaWire(await connectTo(port), 'share-state-restart')
  wires.push(w)
  return w
}

describe('share partition state across a broker SIGKILL and restart', () => {
  it.each([
    ['ShareUpdate records after one ShareSnapshot (the default: a snapshot every 500 updates)', {}],
    [
      'a ShareSnapshot for every write, and the records they made redundant pruned every 100 ms',
      { 'share.coordinator.snapshot.update.records.per.snapshot': '0', 'share.coordinator.state.topic.prune.interval.ms': '100' },
    ],
  ])(
    'resumes from __share_group_state (%s): nothing done is delivered again, nothing available is lost, the start offset is kept',
    async (_, coordinatorProps) => {
      const props = { ...PROPS, ...coordinatorProps }
      const first = await spawnBroker({ props })
      processes.push(first)
      await createTopicOn(first.port, 'jobs', 1)
      let w = await wireTo(first.port)
      const meta = await w.send(metadataCodec, 12, { ...defaultMetadataRequest(), topics: [{ name: 'jobs', topicId: Buffer.alloc(16) }] })
      const topicId = meta.topics[0]!.topicId

      const fetch = (wire: KafkaWire, member: string, epoch: number) =>
        wire.send(shareFetchCodec, 2, {
          groupId: 'g',
          memberId: member,
          shareSessionEpoch: epoch,
          maxWaitMs: 0,
          minBytes: 1,
          maxBytes: 1 << 20,
          maxRecords: 500,
          batchSize: 500,
          shareAcquireMode: 0,
          isRenewAck: false,
          topics: [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [] }] }],
          forgottenTopicsData: [],
        })
      const acknowledge = async (wire: KafkaWire, member: string, epoch: number, batches: Array<[number, number, number]>) => {
        const r = await wire.send(shareAcknowledgeCodec, 2, {
          groupId: 'g',
          memberId: member,
          shareSessionEpoch: epoch,
          isRenewAck: false,
          topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: batches.map(([f, l, t]) => ({ firstOffset: BigInt(f), lastOffset: BigInt(l), acknowledgeTypes: [t] })) }] }],
        })
        expect(r.errorCode).toBe(ErrorCode.NONE)
        expect(r.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE)
      }
      const produce = async (wire: KafkaWire, from: number, n: number) => {
        const r = await wire.send(produceCodec, 9, {
          transactionalId: null,
          acks: -1,
          timeoutMs: 30_000,
          topicData: [{ name: 'jobs', partitionData: [{ index: 0, records: buildBatch(values(from, n)) }] }],
        })
        expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE)
      }
      const startOffset = async (wire: KafkaWire) => {
        const r = await wire.send(readShareGroupStateSummaryCodec, 1, { groupId: 'g', topics: [{ topicId, partitions: [{ partition: 0, leaderEpoch: 0 }] }] })
        const p = r.results[0]!.partitions[0]!
        expect(p.errorCode).toBe(ErrorCode.NONE)
        return p.startOffset
      }

      // The share partition is made at the high watermark (share.auto.offset.reset latest): 0.
      expect(acquired(await fetch(w, 'A', 0))).toEqual([])
      await produce(w, 0, 100)
      expect(acquired(await fetch(w, 'A', 1))).toEqual(['0-99@1'])
      // Accepted 0-29 and 45-59, released 30-39, rejected 40-44; 60-99 held by A at the kill.
      await acknowledge(w, 'A', 2, [
        [0, 29, ACCEPT],
        [30, 39, RELEASE],
        [40, 44, REJECT],
        [45, 59, ACCEPT],
      ])
      // B gets the released records again (delivery count 2) and holds them at the kill.
      const b = await wireTo(first.port)
      expect(acquired(await fetch(b, 'B', 0))).toEqual(['30-39@2'])
      expect(await startOffset(w)).toBe(30n)

      process.kill(first.pid, 'SIGKILL')
      await first.stop()
      const second = await spawnBroker({ props, dataDir: first.dataDir })
      processes.push(second)
      w = await wireTo(second.port)

      expect(await startOffset(w)).toBe(30n)
      // Released once before (count 1 written), acquired by B since: count 2 again; 60-99 never
      // written: count 1 again; nothing of 0-29 and 40-59.
      expect(acquired(await fetch(w, 'C', 0))).toEqual(['30-39@2', '60-99@1'])
      await acknowledge(w, 'C', 1, [
        [30, 39, ACCEPT],
        [60, 99, ACCEPT],
      ])
      await produce(w, 100, 10)
      expect(acquired(await fetch(w, 'C', 2))).toEqual(['100-109@1'])
      await acknowledge(w, 'C', 3, [[100, 109, ACCEPT]])
      expect(await startOffset(w)).toBe(110n)
    },
    120_000,
  )
})
