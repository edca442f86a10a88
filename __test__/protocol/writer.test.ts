/**
 * The Writer's gathering mode (the client's requests): large byte fields are kept by reference
 * between the pieces the writer wrote, and the pieces joined are exactly the bytes a plain writer
 * writes, for every request the codecs encode.
 */
import { describe, expect, it } from 'vitest'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { Writer } from '../../ts/protocol/writer.js'

function produceRequest(batches: Buffer[]) {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 30_000,
    topicData: [{ name: 'gathered', topicId: Buffer.alloc(16), partitionData: batches.map((records, index) => ({ index, records })) }],
  }
}

function encode(w: Writer, batches: Buffer[], version: number): Writer {
  w.int32(0)
  produceCodec.encodeRequest(w, version, produceRequest(batches))
  w.patchInt32(0, w.length - 4)
  return w
}

describe('Writer', () => {
  it('gathers record batches by reference: the pieces are the plain bytes, and the batches are not copied', () => {
    const value = Buffer.alloc(1024, 7)
    const batches = [0, 1, 2].map((p) => buildBatch(Array.from({ length: 10 + p }, () => ({ key: null, value, headers: [] }))))
    for (const version of [3, 8, 9, 12]) {
      const plain = encode(new Writer(), batches, version).finish()
      const gathering = encode(new Writer(undefined, { gather: true }), batches, version)
      const pieces = gathering.finishChunks()
      expect(gathering.length).toBe(plain.length)
      expect(Buffer.concat(pieces)).toEqual(plain)
      expect(gathering.finish()).toEqual(plain)
      // Each batch is one of the pieces, the same memory as the caller's.
      for (const batch of batches) expect(pieces.some((piece) => piece.buffer === batch.buffer && piece.byteOffset === batch.byteOffset && piece.length === batch.length)).toBe(true)
      expect(plain.readInt32BE(0)).toBe(plain.length - 4)
    }
  })

  it('copies small byte fields as a plain writer does, in one piece', () => {
    const small = buildBatch([{ key: null, value: Buffer.from('v'), headers: [] }])
    const w = encode(new Writer(undefined, { gather: true }), [small], 9)
    expect(w.finishChunks()).toHaveLength(1)
    expect(w.finishChunks()[0]).toEqual(encode(new Writer(), [small], 9).finish())
  })

  it('refuses to patch an int32 that a gathered piece would split', () => {
    const w = new Writer(4, { gather: true })
    w.int16(1)
    w.raw(Buffer.alloc(4096))
    w.int32(5)
    w.patchInt32(4098, 6)
    expect(w.finish().readInt32BE(4098)).toBe(6)
    expect(() => w.patchInt32(1, 0)).toThrow(/spans two pieces/)
  })
})
