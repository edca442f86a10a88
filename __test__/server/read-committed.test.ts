/**
 * READ_COMMITTED over the wire on a ferrolog broker: transactional batches and COMMIT / ABORT
 * markers (built by ts/protocol/control-record.ts, appended through the ReplicaManager as the
 * transaction coordinator appends them) move the last stable offset; Fetch with isolation level
 * 1 reads up to it and answers the aborted transactions; ListOffsets LATEST under
 * READ_COMMITTED answers it; and a READ_COMMITTED fetch parked in the purgatory is woken by
 * the COMMIT marker that makes the records stable.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { fetchCodec, type FetchRequest, type FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { buildEndTxnMarker } from '../../ts/protocol/control-record.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const TOPIC = 'txn'
const TP = { topic: TOPIC, partition: 0 }

let broker: Broker | undefined
const wires: KafkaWire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await broker?.stop()
  broker = undefined
})

async function setup(): Promise<{ b: Broker; wire: KafkaWire }> {
  broker = await startBroker()
  await broker.createTopic(TOPIC, 1, {})
  const wire = new KafkaWire(await connectTo(broker.port), 'read-committed')
  wires.push(wire)
  return { b: broker, wire }
}

function fetch(wire: KafkaWire, offset: bigint, isolationLevel: number, extra: Partial<FetchRequest> = {}): Promise<FetchResponse> {
  return wire.send(
    fetchCodec,
    12,
    fetchRequest({
      isolationLevel,
      ...extra,
      topics: [
        { topic: TOPIC, topicId: ZERO_UUID, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
      ],
    }),
  )
}

async function latest(wire: KafkaWire, isolationLevel: number): Promise<bigint> {
  const r = await wire.send(listOffsetsCodec, 7, {
    replicaId: -1,
    isolationLevel,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
  })
  expect(r.topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
  return r.topics[0].partitions[0].offset
}

function txnData(producerId: bigint, sequence: number, ...values: string[]): Buffer {
  return buildBatch(
    values.map((value) => ({ value })),
    { producerId, producerEpoch: 0, baseSequence: sequence, isTransactional: true },
  )
}

async function append(b: Broker, records: Buffer, origin: 'CLIENT' | 'COORDINATOR' = 'CLIENT'): Promise<void> {
  const r = await b.replicaManager.appendRecords(TP, records, 1, origin)
  expect(r.errorCode).toBe(ErrorCode.NONE)
}

const marker = (type: 'COMMIT' | 'ABORT', producerId: bigint) => buildEndTxnMarker({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0 })

/** Offsets and values of the data records of a fetch answer (markers left out). */
function values(res: FetchResponse): string[] {
  const records = res.responses[0].partitions[0].records
  if (!records || records.length === 0) return []
  return decodeBatches(Buffer.from(records))
    .filter((batch) => !batch.isControl)
    .flatMap((batch) => batch.records.map((r) => `${r.offset}:${r.value!.toString()}`))
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  if (!condition()) throw new Error(`${what} did not happen`)
}

describe('READ_COMMITTED fetches and ListOffsets', { timeout: 20_000 }, () => {
  it('read up to the last stable offset, answer aborted transactions, and ListOffsets says the LSO', async () => {
    const { b, wire } = await setup()
    await append(b, txnData(7n, 0, 'a', 'b')) // 0..1, 7 open
    await append(b, buildBatch([{ value: 'plain' }])) // 2
    expect(b.logManager.getLog(TOPIC, 0)!.highWatermark()).toBe(3n)
    let part = (await fetch(wire, 0n, 1)).responses[0].partitions[0]
    expect([part.highWatermark, part.lastStableOffset]).toEqual([3n, 0n])
    expect(part.records?.length ?? 0).toBe(0)
    expect(part.abortedTransactions).toEqual([])
    expect(await latest(wire, 1)).toBe(0n)
    expect(await latest(wire, 0)).toBe(3n)
    // READ_UNCOMMITTED is as before: everything below the high watermark, no aborted list.
    const uncommitted = await fetch(wire, 0n, 0)
    expect(values(uncommitted)).toEqual(['0:a', '1:b', '2:plain'])
    expect(uncommitted.responses[0].partitions[0].abortedTransactions).toBeNull()

    // A client may not write markers; the coordinator may.
    const refused = await b.replicaManager.appendRecords(TP, marker('ABORT', 7n), 1, 'CLIENT')
    expect(refused.errorCode).toBe(ErrorCode.INVALID_RECORD)
    await append(b, marker('ABORT', 7n), 'COORDINATOR') // 3
    part = (await fetch(wire, 0n, 1)).responses[0].partitions[0]
    expect([part.highWatermark, part.lastStableOffset]).toEqual([4n, 4n])
    expect(part.abortedTransactions).toEqual([{ producerId: 7n, firstOffset: 0n }])
    expect(await latest(wire, 1)).toBe(4n)
    // From inside it (its marker is still ahead) it is answered too; at the LSO, nothing.
    expect((await fetch(wire, 2n, 1)).responses[0].partitions[0].abortedTransactions).toEqual([{ producerId: 7n, firstOffset: 0n }])
    expect((await fetch(wire, 4n, 1)).responses[0].partitions[0].abortedTransactions).toEqual([])
  })

  it('a parked READ_COMMITTED fetch is woken by the COMMIT marker that makes its records stable', async () => {
    const { b, wire } = await setup()
    await append(b, txnData(9n, 0, 'x', 'y')) // 0..1, open
    const answer = fetch(wire, 0n, 1, { maxWaitMs: 15_000, minBytes: 1 })
    await until(() => b.replicaManager.delayedFetchStats().parked === 1, 'the fetch to park')
    // More of the open transaction: the high watermark moves, the LSO does not; it stays parked.
    await append(b, txnData(9n, 2, 'z')) // 2
    expect(b.replicaManager.delayedFetchStats().parked).toBe(1)
    await append(b, marker('COMMIT', 9n), 'COORDINATOR') // 3
    const res = await answer
    const part = res.responses[0].partitions[0]
    expect(part.lastStableOffset).toBe(4n)
    expect(values(res)).toEqual(['0:x', '1:y', '2:z'])
    expect(part.abortedTransactions).toEqual([])
    expect(b.replicaManager.delayedFetchStats()).toMatchObject({ parked: 0, expired: 0 })
  })
})
