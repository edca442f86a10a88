/**
 * ShareFetch on a real ferrolog broker over a socket: a fetch with nothing to acquire parks in
 * the share fetch purgatory and is answered by the append that brings records; a parked fetch is
 * woken when another member releases records. The parked fetches wait up to PARKED_MS, longer
 * than the test's timeout: one that nothing woke fails the test.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { shareAcknowledgeCodec } from '../../ts/protocol/apis/share-acknowledge.js'
import { shareFetchCodec, type ShareFetchResponse } from '../../ts/protocol/apis/share-fetch.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

/** Longer than vitest's 60 s test timeout. */
const PARKED_MS = 120_000

let broker: Broker | undefined
const wires: KafkaWire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await broker?.stop()
  broker = undefined
})

const acquired = (r: ShareFetchResponse<Buffer | null>) => r.responses.flatMap((t) => t.partitions.flatMap((p) => p.acquiredRecords.map((a) => `${a.firstOffset}-${a.lastOffset}@${a.deliveryCount}`)))

async function setup(groupConfigs: Record<string, string> = {}) {
  broker = await startBroker()
  const topic = (await broker.createTopic('jobs', 1, {}))!
  await broker.groupConfigs.alter('g', { 'share.auto.offset.reset': 'earliest', ...groupConfigs }, false)
  const wire = async () => {
    const w = new KafkaWire(await connectTo(broker!.port), 'share-fetch-test')
    wires.push(w)
    return w
  }
  const fetch = (w: KafkaWire, member: string, epoch: number, maxWaitMs: number, acks: Array<{ firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }> = []) =>
    w.send(shareFetchCodec, 2, {
      groupId: 'g',
      memberId: member,
      shareSessionEpoch: epoch,
      maxWaitMs,
      minBytes: 1,
      maxBytes: 1 << 20,
      maxRecords: 100,
      batchSize: 100,
      shareAcquireMode: 0,
      isRenewAck: false,
      topics: [{ topicId: topic.topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: acks }] }],
      forgottenTopicsData: [],
    })
  const produce = async (w: KafkaWire, records: Buffer) => {
    const r = await w.send(produceCodec, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'jobs', partitionData: [{ index: 0, records }] }] })
    expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE)
  }
  return { topic, wire, fetch, produce }
}

const values = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${from + i}`) }))

describe('ShareFetch', () => {
  it('a parked fetch is answered by the append that brings records', async () => {
    const { wire, fetch, produce } = await setup()
    const a = await wire()
    expect(acquired(await fetch(a, 'A', 0, 0))).toEqual([])
    const parked = fetch(a, 'A', 1, PARKED_MS)
    await produce(await wire(), buildBatch(values(3)))
    const r = await parked
    expect(r.errorCode).toBe(ErrorCode.NONE)
    expect(acquired(r)).toEqual(['0-2@1'])
  })

  it('a parked fetch is woken when another member releases records, which it gets with their delivery count up', async () => {
    const { topic, wire, fetch, produce } = await setup()
    const [a, b] = [await wire(), await wire()]
    await produce(a, buildBatch(values(2)))
    expect(acquired(await fetch(a, 'A', 0, 0))).toEqual(['0-1@1'])
    expect(acquired(await fetch(b, 'B', 0, 0))).toEqual([])
    const parked = fetch(b, 'B', 1, PARKED_MS)
    const release = await a.send(shareAcknowledgeCodec, 2, {
      groupId: 'g',
      memberId: 'A',
      shareSessionEpoch: 1,
      isRenewAck: false,
      topics: [{ topicId: topic.topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [2] }] }] }],
    })
    expect(release.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE)
    expect(acquired(await parked)).toEqual(['0-1@2'])
  })
})
