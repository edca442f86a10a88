/**
 * A consumer bounds what one compressed batch may cost it (issue #24 item 1, the reader's side):
 * ferrolog's Consumer with maxDecompressedBytes below a batch's inflated size gets the batch and
 * raises MESSAGE_TOO_LARGE naming its offset, after the records before it, with the Rust decoder
 * and with the TypeScript one, at each poll until the application seeks past it; nothing hangs.
 */
import { describe, expect, it } from 'vitest'
import { CompletedFetch } from '../../ts/client/completed-fetch.js'
import { Consumer } from '../../ts/client/consumer.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { nativeRecordIndexer, type RecordIndexer } from '../../ts/client/fetched-records.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { startBroker } from '../helpers/broker.js'
import { kafkaToolOk, KafkaTool } from '../helpers/kafka-tools.js'

const MIB = 1024 * 1024

/** A small batch (offsets 0-1), the 3 x 1 MiB gzip batch of zeros (2-4), a small one (5). */
function response(): Buffer {
  return Buffer.concat([
    buildBatch([{ value: 'a' }, { value: 'b' }], { compression: 'gzip', baseOffset: 0n }),
    buildBatch(
      Array.from({ length: 3 }, () => ({ value: Buffer.alloc(MIB) })),
      { compression: 'gzip', baseOffset: 2n },
    ),
    buildBatch([{ value: 'c' }], { compression: 'gzip', baseOffset: 5n }),
  ])
}

function completed(records: Buffer, indexer: RecordIndexer | null, maxDecompressedBytes: number, from = 0n): CompletedFetch {
  const data = { partitionIndex: 0, errorCode: 0, highWatermark: 6n, lastStableOffset: 6n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records }
  return new CompletedFetch('t', 0, from, 0, data, false, 0, indexer, maxDecompressedBytes)
}

describe('maxDecompressedBytes, the consumer bound on one batch', () => {
  for (const [name, indexer] of [
    ['the Rust decoder', nativeRecordIndexer()],
    ['the TypeScript decoder', null],
  ] as const) {
    it(`${name}: the records before the batch, then MESSAGE_TOO_LARGE naming it; within the bound, all of them`, () => {
      const c = completed(response(), indexer, MIB)
      expect(c.fetchRecords(100).map((r) => String(r.value))).toEqual(['a', 'b'])
      let err: unknown
      try {
        c.fetchRecords(100)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(KafkaClientError)
      expect((err as KafkaClientError).code).toBe('MESSAGE_TOO_LARGE')
      expect((err as Error).message).toBe('t-0 batch at offset 2: its records decompress to more than maxDecompressedBytes (1048576 bytes)')
      expect(c.isConsumed).toBe(true)
      // From past it (the application's seek), the rest.
      expect(
        completed(response(), indexer, MIB, 5n)
          .fetchRecords(100)
          .map((r) => String(r.value)),
      ).toEqual(['c'])
      // A bound above the batch: every record.
      expect(
        completed(response(), indexer, 4 * MIB)
          .fetchRecords(100)
          .map((r) => r.value!.length),
      ).toEqual([1, 1, MIB, MIB, MIB, 1])
    })
  }

  it("ferrolog's Consumer with maxDecompressedBytes=1 MiB polls MESSAGE_TOO_LARGE for the 3 MiB gzip batch, again after, and reads on once it seeks past", async () => {
    const broker = await startBroker()
    const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, clientId: 'bounded', maxDecompressedBytes: MIB })
    try {
      await kafkaToolOk(broker.port, KafkaTool.TOPICS, ['--create', '--topic', 'bomb', '--partitions', '1', '--replication-factor', '1'])
      const log = broker.logManager.getLog('bomb', 0)!
      for (const batch of [
        buildBatch([{ value: 'a' }]),
        buildBatch(
          Array.from({ length: 3 }, () => ({ value: Buffer.alloc(MIB) })),
          { compression: 'gzip' },
        ),
        buildBatch([{ value: 'c' }]),
      ]) {
        await log.appendAsync(batch)
      }
      consumer.assign([{ topic: 'bomb', partition: 0, offset: 0n }])
      const values: string[] = []
      const errors: string[] = []
      for (let i = 0; i < 40 && errors.length < 2; i++) {
        try {
          for (const b of await consumer.poll(500)) for (const r of b.records) values.push(String(r.value))
        } catch (e) {
          expect(e).toBeInstanceOf(KafkaClientError)
          errors.push(`${(e as KafkaClientError).code}: ${(e as Error).message}`)
        }
      }
      expect(values).toEqual(['a'])
      expect(errors).toEqual(Array(2).fill('MESSAGE_TOO_LARGE: bomb-0 batch at offset 1: its records decompress to more than maxDecompressedBytes (1048576 bytes)'))
      consumer.seek('bomb', 0, 4n)
      for (let i = 0; i < 40 && values.length < 2; i++) for (const b of await consumer.poll(500)) for (const r of b.records) values.push(String(r.value))
      expect(values).toEqual(['a', 'c'])
    } finally {
      await consumer.close()
      await broker.stop()
    }
  }, 120_000)
})
