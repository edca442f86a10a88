/**
 * Seeded random mutations of valid batches of every codec: whatever the bytes, decoding,
 * validating and walking them throws nothing but a RecordError.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { LENGTH_OFFSET, LOG_OVERHEAD, RECORDS_OFFSET, updateCrc, validateBatch } from '../../ts/protocol/batch-header.js'
import { compressionTypeOf, decompress } from '../../ts/protocol/compression.js'
import { batchesOf, decodeBatch, validateRecords } from '../../ts/protocol/records.js'
import { RecordError } from '../../ts/protocol/record-error.js'
import type { ProducerRecord } from '../../ts/storage/types.js'
import { rng } from './helpers.js'

const ITERATIONS = Number(process.env.FERROLOG_FUZZ_ITERATIONS ?? 1500)
const CLIENTS = join(__dirname, 'fixtures', 'kafka-clients')

function sampleRecords(n: number): ProducerRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: i % 4 === 1 ? null : `key-${i}`,
    value: i % 9 === 4 ? null : `value ${i} `.repeat(1 + (i % 5)),
    timestamp: 1_700_000_000_000 + i * 17 - (i % 3) * 40,
    headers: i % 2 ? [{ key: `h${i}`, value: i % 3 ? `v${i}` : null }] : [],
  }))
}

const BASES: Array<[string, Buffer]> = [
  ['none', buildBatch(sampleRecords(12))],
  ['gzip', buildBatch(sampleRecords(12), { compression: 'gzip' })],
  ['snappy', buildBatch(sampleRecords(12), { compression: 'snappy' })],
  ['lz4', buildBatch(sampleRecords(12), { compression: 'lz4' })],
  ['zstd', buildBatch(sampleRecords(12), { compression: 'zstd' })],
  ['zstd (kafka-clients)', readFileSync(join(CLIENTS, 'zstd-plain.bin'))],
  ['snappy (kafka-clients)', readFileSync(join(CLIENTS, 'snappy-plain.bin'))],
  ['lz4 (kafka-clients)', readFileSync(join(CLIENTS, 'lz4-plain.bin'))],
  ['two batches', Buffer.concat([buildBatch(sampleRecords(3)), buildBatch(sampleRecords(2), { baseOffset: 3n, compression: 'lz4' })])],
]

function mutate(base: Buffer, next: () => number): Buffer {
  const pick = (n: number) => Math.floor(next() * n)
  let buf = Buffer.from(base)
  const rounds = 1 + pick(4)
  for (let r = 0; r < rounds; r++) {
    const at = pick(buf.length)
    switch (pick(7)) {
      case 0:
        buf[at] ^= 1 << pick(8)
        break
      case 1:
        buf[at] = [0x00, 0xff, 0x80, 0x7f, 0x01, pick(256)][pick(6)]
        break
      case 2:
        buf = buf.subarray(0, at)
        break
      case 3: {
        const extra = Buffer.alloc(1 + pick(8))
        for (let i = 0; i < extra.length; i++) extra[i] = pick(256)
        buf = Buffer.concat([buf.subarray(0, at), extra, buf.subarray(at)])
        break
      }
      case 4:
        buf = Buffer.concat([buf.subarray(0, at), buf.subarray(Math.min(buf.length, at + 1 + pick(8)))])
        break
      case 5:
        // A run of continuation bytes: overlong varints.
        buf.fill(0xff, at, Math.min(buf.length, at + 1 + pick(11)))
        break
      default:
        // Aim at the records section.
        if (buf.length > RECORDS_OFFSET) buf[RECORDS_OFFSET + pick(buf.length - RECORDS_OFFSET)] = pick(256)
    }
  }
  // Most of the time make the damage reach the records: fix batchLength and the CRC.
  if (buf.length >= RECORDS_OFFSET && next() < 0.7) {
    buf.writeInt32BE(buf.length - LOG_OVERHEAD, LENGTH_OFFSET)
    updateCrc(buf)
  }
  return buf
}

function onlyRecordErrors(what: string, fn: () => unknown): void {
  try {
    fn()
  } catch (err) {
    if (!(err instanceof RecordError)) {
      throw new Error(`${what}: threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`, { cause: err })
    }
  }
}

describe('random mutations throw only RecordError', () => {
  BASES.forEach(([name, base], b) => {
    it(name, () => {
      const next = rng(1000 + b)
      let failures = 0
      for (let i = 0; i < ITERATIONS; i++) {
        const buf = mutate(base, next)
        const what = `${name} #${i} (${buf.toString('hex').slice(0, 64)}...)`
        onlyRecordErrors(what, () => decodeBatch(buf, 0, { maxDecompressedBytes: 1 << 20 }))
        onlyRecordErrors(what, () => validateRecords(buf, 0, validateBatch(buf), { maxDecompressedBytes: 1 << 20 }))
        onlyRecordErrors(what, () => {
          for (const e of batchesOf(buf)) decodeBatch(buf, e.position)
        })
        if (buf.length > RECORDS_OFFSET) {
          onlyRecordErrors(what, () => decompress(compressionTypeOf(base.readInt16BE(21)), buf.subarray(RECORDS_OFFSET), 1 << 20))
        }
        try {
          decodeBatch(buf)
        } catch {
          failures++
        }
      }
      // The mutations do reach the decoders: most batches are refused, some survive.
      expect(failures).toBeGreaterThan(ITERATIONS / 2)
    })
  })
})
