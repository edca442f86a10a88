/**
 * A damaged batch header in a sealed segment, over the wire: Fetch answers the partition with
 * CORRUPT_MESSAGE (Kafka's CorruptRecordException) on both storage backends, rather than serving
 * the next segment as if the offsets behind the damage did not exist.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { fetchCodec, type FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const TOPIC = 'damaged'

let broker: Broker | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  wire = undefined
  await broker?.stop()
  broker = undefined
})

describe.each(['native', 'js'] as BackendName[])('Fetch of a damaged sealed segment on the %s backend', (backend) => {
  it('answers CORRUPT_MESSAGE for offsets at the damage, and serves the others', async () => {
    broker = await startBroker({ backend })
    await broker.createTopic(TOPIC, 1, {})
    const log = broker.replicaManager.getLog({ topic: TOPIC, partition: 0 })!
    for (let i = 0; i < 200; i++) log.append([{ value: Buffer.from(`v${i}`) }, { value: Buffer.from(`w${i}`) }])
    log.roll()
    log.append([{ value: Buffer.from('after') }])
    const sealed = log.segments()[0]
    // The 100th batch (offsets 198-199): batchLength 0.
    const bytes = readFileSync(sealed.file)
    let at = 0
    for (let n = 0; n < 99; n++) at += 12 + bytes.readInt32BE(at + 8)
    expect(bytes.readBigInt64BE(at)).toBe(198n)
    const fd = openSync(sealed.file, 'r+')
    writeSync(fd, Buffer.alloc(4), 0, 4, at + 8)
    closeSync(fd)
    wire = new KafkaWire(await connectTo(broker.port), 'fetch-corrupt-test')
    const fetchAt = async (fetchOffset: bigint) => {
      const res: FetchResponse = await wire!.send(
        fetchCodec,
        12,
        fetchRequest({
          maxWaitMs: 0,
          minBytes: 0,
          topics: [
            {
              topic: TOPIC,
              topicId: ZERO_UUID,
              partitions: [{ partition: 0, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n, fetchOffset, partitionMaxBytes: 1 << 20 }],
            },
          ],
        }),
      )
      return res.responses[0].partitions[0]
    }
    // (Offsets whose offset index entry lies past the damage are read from there, in Kafka too.)
    for (const offset of [198n, 199n]) {
      const p = await fetchAt(offset)
      expect(p.errorCode, `offset ${offset}`).toBe(ErrorCode.CORRUPT_MESSAGE)
      expect(p.records?.length ?? 0).toBe(0)
    }
    expect((await fetchAt(0n)).errorCode).toBe(ErrorCode.NONE)
    expect((await fetchAt(400n)).errorCode).toBe(ErrorCode.NONE)
  })
})
