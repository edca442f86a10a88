/**
 * InitProducerId and idempotent Produce through a socket, as a client sees them: fresh producer
 * ids (never reused after a restart), retries answered with the original offset and not
 * appended, sequence gaps and stale epochs refused, producer state rebuilt after a restart.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { deleteRecordsCodec } from '../../ts/protocol/apis/delete-records.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { produceCodec, type PartitionProduceResponse } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let client: NetworkClient | undefined
afterEach(async () => {
  await client?.close()
  await broker?.stop()
  client = broker = undefined
})

async function open(dataDir: string): Promise<NetworkClient> {
  await client?.close()
  await broker?.stop()
  broker = await startBroker({ dataDir })
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
  return client
}

async function initProducerId(c: NetworkClient, version = 4) {
  return c.send(initProducerIdCodec, version, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })
}

async function produce(c: NetworkClient, topic: string, batch: Buffer, version = 11): Promise<PartitionProduceResponse> {
  const response = await c.send(produceCodec, version, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }],
  })
  return response.responses[0].partitionResponses[0]
}

function idempotent(producerId: bigint, producerEpoch: number, baseSequence: number, values: string[]): Buffer {
  return buildBatch(
    values.map((value) => ({ value })),
    { producerId, producerEpoch, baseSequence },
  )
}

describe('InitProducerId', () => {
  it('hands out distinct producer ids at epoch 0, in every version', async () => {
    const c = await open(tempDir())
    const seen = new Set<bigint>()
    for (const version of [0, 1, 2, 3, 4, 5]) {
      const r = await initProducerId(c, version)
      expect(r).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 })
      expect(r.producerId).toBeGreaterThanOrEqual(0n)
      seen.add(r.producerId)
    }
    expect(seen.size).toBe(6)
  })

  it('never reuses a producer id after a restart', async () => {
    const dataDir = tempDir()
    const before = (await initProducerId(await open(dataDir))).producerId
    const after = (await initProducerId(await open(dataDir))).producerId
    expect(after).toBeGreaterThan(before)
  })

  it('refuses an empty transactional id with INVALID_REQUEST (transactional ids: __test__/coordinator/transaction/)', async () => {
    const c = await open(tempDir())
    const r = await c.send(initProducerIdCodec, 4, { transactionalId: '', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })
    expect(r).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 })
  })
})

describe('idempotent Produce', () => {
  it('answers a retried batch with its original offset and appends it once', async () => {
    const c = await open(tempDir())
    await broker!.createTopic('idem', 1, {})
    const { producerId } = await initProducerId(c)
    expect(await produce(c, 'idem', idempotent(producerId, 0, 0, ['a', 'b']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    expect(await produce(c, 'idem', idempotent(producerId, 0, 2, ['c']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
    for (const version of [3, 8, 11]) {
      expect(await produce(c, 'idem', idempotent(producerId, 0, 0, ['a', 'b']), version)).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    }
    expect(await produce(c, 'idem', idempotent(producerId, 0, 2, ['c']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
    expect(
      broker!.logManager
        .getLog('idem', 0)!
        .readRecords(0n)
        .map((r) => r.value!.toString()),
    ).toEqual(['a', 'b', 'c'])
  })

  it('refuses a sequence gap with OUT_OF_ORDER_SEQUENCE_NUMBER and a stale epoch with INVALID_PRODUCER_EPOCH', async () => {
    const c = await open(tempDir())
    await broker!.createTopic('idem', 1, {})
    const { producerId } = await initProducerId(c)
    expect((await produce(c, 'idem', idempotent(producerId, 1, 0, ['a']))).errorCode).toBe(ErrorCode.NONE)
    expect((await produce(c, 'idem', idempotent(producerId, 1, 5, ['x']))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    expect((await produce(c, 'idem', idempotent(producerId, 0, 1, ['x']))).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH)
    expect((await produce(c, 'idem', idempotent(producerId, 2, 3, ['x']))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    expect((await produce(c, 'idem', idempotent(producerId, 2, 0, ['b']))).errorCode).toBe(ErrorCode.NONE)
    expect(
      broker!.logManager
        .getLog('idem', 0)!
        .readRecords(0n)
        .map((r) => r.value!.toString()),
    ).toEqual(['a', 'b'])
  })

  it('accepts an unknown producer at any sequence, as Kafka 2.5+ does', async () => {
    const c = await open(tempDir())
    await broker!.createTopic('idem', 1, {})
    expect(await produce(c, 'idem', idempotent(123456n, 0, 77, ['late']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
  })

  it('still recognises retries after a restart (state rebuilt from the log)', async () => {
    const dataDir = tempDir()
    let c = await open(dataDir)
    await broker!.createTopic('idem', 1, {})
    const { producerId } = await initProducerId(c)
    await produce(c, 'idem', buildBatch([{ value: 'plain' }]))
    for (let seq = 0; seq < 3; seq++) expect((await produce(c, 'idem', idempotent(producerId, 0, seq, [`v${seq}`]))).baseOffset).toBe(BigInt(seq + 1))

    c = await open(dataDir)
    expect(await produce(c, 'idem', idempotent(producerId, 0, 2, ['v2']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 3n })
    expect((await produce(c, 'idem', idempotent(producerId, 0, 4, ['gap']))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    expect(await produce(c, 'idem', idempotent(producerId, 0, 3, ['v3']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 4n })
    expect(broker!.logManager.getLog('idem', 0)!.readRecords(0n)).toHaveLength(5)
  })

  it('keeps a producer whose records DeleteRecords removed, as Kafka (its retry is a duplicate)', async () => {
    const c = await open(tempDir())
    await broker!.createTopic('idem', 1, {})
    const { producerId } = await initProducerId(c)
    await produce(c, 'idem', idempotent(producerId, 0, 0, ['a']))
    await produce(c, 'idem', idempotent(producerId, 0, 1, ['b']))
    const deleted = await c.send(deleteRecordsCodec, 2, { topics: [{ name: 'idem', partitions: [{ partitionIndex: 0, offset: -1n }] }], timeoutMs: 1000 })
    expect(deleted.topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, lowWatermark: 2n })
    // The retry of the deleted batch: its original offset, nothing appended.
    expect(await produce(c, 'idem', idempotent(producerId, 0, 1, ['b']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 1n })
    expect((await produce(c, 'idem', idempotent(producerId, 0, 5, ['x']))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    expect(await produce(c, 'idem', idempotent(producerId, 0, 2, ['c']))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
  })
})
