/**
 * Produce's per-partition errors over a socket (requests written by the test), and responses
 * kept in request order on one connection even when an earlier request waits in the purgatory.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec, type ProduceResponse } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

let broker: Broker | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  await broker?.stop()
  broker = undefined
})

async function produce(topic: string, records: Buffer, acks = -1): Promise<ProduceResponse> {
  return wire!.send(produceCodec, 9, { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] })
}

function errorOf(res: ProduceResponse): number {
  return res.responses[0].partitionResponses[0].errorCode
}

describe('Produce validation', () => {
  it('answers CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, UNSUPPORTED_FOR_MESSAGE_FORMAT, INVALID_RECORD (two batches), INVALID_REQUIRED_ACKS and UNKNOWN_TOPIC_OR_PARTITION, and appends nothing', async () => {
    broker = await startBroker()
    await broker.createTopic('checked', 1, { 'max.message.bytes': '2000' })
    wire = new KafkaWire(await connectTo(broker.port), 'produce-validation')
    const log = broker.logManager.getLog('checked', 0)!

    const corrupt = buildBatch([{ value: 'a' }, { value: 'b' }], { nowMs: 1 })
    corrupt[corrupt.length - 1] ^= 0x55
    expect(errorOf(await produce('checked', corrupt))).toBe(ErrorCode.CORRUPT_MESSAGE)

    const large = buildBatch([{ value: Buffer.alloc(5000, 1) }], { nowMs: 1 })
    expect(errorOf(await produce('checked', large))).toBe(ErrorCode.MESSAGE_TOO_LARGE)

    const oldMagic = buildBatch([{ value: 'a' }], { nowMs: 1 })
    oldMagic[16] = 1
    expect(errorOf(await produce('checked', oldMagic))).toBe(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT)

    const twoBatches = await produce('checked', Buffer.concat([buildBatch([{ value: 'a' }], { nowMs: 1 }), buildBatch([{ value: 'b' }], { nowMs: 1 })]))
    expect(errorOf(twoBatches)).toBe(ErrorCode.INVALID_RECORD)
    expect(twoBatches.responses[0].partitionResponses[0].errorMessage).toMatch(/exactly one record batch per partition/)

    expect(errorOf(await produce('checked', buildBatch([{ value: 'a' }], { nowMs: 1 }), 2))).toBe(ErrorCode.INVALID_REQUIRED_ACKS)
    expect(errorOf(await produce('missing', buildBatch([{ value: 'a' }], { nowMs: 1 })))).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    expect(log.logEndOffset()).toBe(0n)

    const good = await produce('checked', buildBatch([{ value: 'ok' }], { nowMs: 1 }))
    expect(errorOf(good)).toBe(ErrorCode.NONE)
    expect(log.readRecords(0n).map((r) => r.value?.toString())).toEqual(['ok'])
  })

  it('keeps responses in request order behind a fetch that waits in the purgatory', async () => {
    broker = await startBroker()
    await broker.createTopic('ordered', 1, {})
    wire = new KafkaWire(await connectTo(broker.port), 'ordering')
    const done: string[] = []
    const started = Date.now()
    const fetch = wire
      .send(
        fetchCodec,
        12,
        fetchRequest({
          maxWaitMs: 800,
          minBytes: 1,
          topics: [
            { topic: 'ordered', topicId: ZERO_UUID, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
          ],
        }),
      )
      .then(() => done.push('fetch'))
    // Sent after the fetch on the same connection: answered at once by the broker, but written
    // only after the fetch's response (KafkaWire checks every correlation id in order).
    const metadata = wire
      .send(metadataCodec, 12, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
      .then(() => done.push('metadata'))
    await Promise.all([fetch, metadata])
    expect(done).toEqual(['fetch', 'metadata'])
    expect(Date.now() - started).toBeGreaterThanOrEqual(700)
  })
})
