/**
 * What a share fetch makes of the bytes a log read returned (ts/share/share-fetch-utils.ts):
 * batches marked data or skip (control batches; read_committed, the batches of aborted
 * transactions until their ABORT marker), a trailing partial batch left out, and the bytes sent
 * for what was acquired. Real record batches, built as producers and the transaction
 * coordinator write them.
 */
import { describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { buildEndTxnMarker } from '../../ts/protocol/control-record.js'
import { acquiredBytes, readBatches } from '../../ts/share/share-fetch-utils.js'

const records = (n: number) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`) }))
const txn = (baseOffset: bigint, producerId: bigint, n: number) => buildBatch(records(n), { baseOffset, producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true })
const marker = (baseOffset: bigint, producerId: bigint, type: 'ABORT' | 'COMMIT') => buildEndTxnMarker({ baseOffset, producerId, producerEpoch: 0, coordinatorEpoch: 0, type })
const kinds = (bs: ReturnType<typeof readBatches>) => bs.map((b) => `${b.baseOffset}-${b.lastOffset}:${b.kind}`)

describe('readBatches', () => {
  it('plain batches are data; a trailing partial batch is left out', () => {
    const a = buildBatch(records(3), { baseOffset: 0n })
    const b = buildBatch(records(2), { baseOffset: 3n })
    const bytes = Buffer.concat([a, b.subarray(0, b.length - 1)])
    expect(kinds(readBatches(bytes, undefined))).toEqual(['0-2:data'])
  })

  it("an aborted transaction's batches and every control batch are skipped; a committed one's are data", () => {
    const bytes = Buffer.concat([
      txn(0n, 7n, 2), // aborted below
      txn(2n, 8n, 2), // committed below
      marker(4n, 7n, 'ABORT'),
      marker(5n, 8n, 'COMMIT'),
      txn(6n, 7n, 1), // producer 7's next transaction: not in the aborted list
      buildBatch(records(1), { baseOffset: 7n }),
    ])
    const read = readBatches(bytes, [{ producerId: 7n, firstOffset: 0n }])
    expect(kinds(read)).toEqual(['0-1:skip', '2-3:data', '4-4:skip', '5-5:skip', '6-6:data', '7-7:data'])
    // read_uncommitted: no aborted transactions given, only the markers are skipped.
    expect(kinds(readBatches(bytes, undefined))).toEqual(['0-1:data', '2-3:data', '4-4:skip', '5-5:skip', '6-6:data', '7-7:data'])
  })

  it('acquiredBytes sends the batches from the first acquired offset to the last', () => {
    const a = buildBatch(records(3), { baseOffset: 0n })
    const b = buildBatch(records(3), { baseOffset: 3n })
    const c = buildBatch(records(3), { baseOffset: 6n })
    const bytes = Buffer.concat([a, b, c])
    const batches = readBatches(bytes, undefined)
    expect(acquiredBytes(bytes, batches, [{ firstOffset: 4n, lastOffset: 7n, deliveryCount: 1 }])).toEqual(Buffer.concat([b, c]))
    expect(acquiredBytes(bytes, batches, [])).toEqual(Buffer.alloc(0))
  })
})
