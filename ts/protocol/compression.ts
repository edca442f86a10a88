/**
 * The compression codecs of record batches (attributes bits 0-2), each in the stream format
 * Kafka's Java client writes and reads:
 *
 *   0 none
 *   1 gzip    RFC 1952 (node:zlib)
 *   2 snappy  snappy-java's framing (snappy.ts); a bare raw block is accepted too
 *   3 lz4     LZ4 frame (lz4.ts), as KafkaLZ4BlockOutputStream
 *   4 zstd    Zstandard frames: decompressed by zstd.ts; compressed by node:zlib where it has
 *             zstd (Node 22.15+), else by zstd-encoder.ts (valid zstd, a lower ratio)
 *
 * Decompression never produces more than `maxOutput` bytes: past it (a zip bomb, or a batch
 * lying about its contents) it throws OutputLimitError (CORRUPT_RECORD), and it throws
 * RecordError('CORRUPT_RECORD') for any input that does not decode. `progress` (output-limit.ts)
 * sees the output as it grows, block by block, except for gzip (node:zlib inflates in one call,
 * bounded by maxOutputLength) and none.
 *
 * Off the event loop: `decompressSteps` pauses between blocks (records.ts runs it in slices
 * that let other clients be served), and `gunzipAsync` inflates on zlib's worker threads,
 * `progress` seeing each chunk.
 */
import * as zlib from 'node:zlib'
import type { CompressionType } from './record-types.js'
import { RecordError } from './record-error.js'
import { lz4Compress, lz4DecompressSteps } from './lz4.js'
import { snappyCompress, snappyDecompressSteps } from './snappy.js'
import { zstdDecompressSteps } from './zstd.js'
import { zstdCompress } from './zstd-encoder.js'
import { NO_PROGRESS, OutputLimitError, runSteps, type Progress, type Steps } from './output-limit.js'

/** The default bound on one batch's decompressed records. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024

/** Codec ids, indexed by attributes & 0x07. */
export const COMPRESSION_TYPES: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

const IDS: Readonly<Record<CompressionType, number>> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 }

/** The attributes bits of a codec. */
export function compressionId(type: CompressionType): number {
  const id = IDS[type]
  if (id === undefined) throw new RecordError('UNSUPPORTED_COMPRESSION', `unknown compression type ${String(type)}`)
  return id
}

/** The codec of attributes bits 0-2; ids 5-7 are UNSUPPORTED_COMPRESSION. */
export function compressionTypeOf(attributes: number): CompressionType {
  const type = COMPRESSION_TYPES[attributes & 0x07]
  if (type === undefined) {
    throw new RecordError('UNSUPPORTED_COMPRESSION', `unknown compression codec id ${attributes & 0x07}`)
  }
  return type
}

/** node:zlib's zstd encoder (libzstd), present from Node 22.15 / 23.8 on; absent on Node 20. */
const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: (data: Buffer) => Buffer }).zstdCompressSync

/** Whether `compress(type, ...)` works in this implementation (every codec does). */
export function canCompress(type: CompressionType): boolean {
  return IDS[type] !== undefined
}

/** A function that compresses record bytes in Kafka's framing of a codec. */
export type Compressor = (type: CompressionType, data: Buffer) => Buffer

/** Compresses `data` with `type` in Kafka's stream format for that codec. */
export function compress(type: CompressionType, data: Buffer): Buffer {
  switch (type) {
    case 'none':
      return data
    case 'gzip':
      return zlib.gzipSync(data)
    case 'snappy':
      return snappyCompress(data)
    case 'lz4':
      return lz4Compress(data)
    case 'zstd':
      return zstdCompressSync ? zstdCompressSync(data) : zstdCompress(data)
    default:
      throw new RecordError('UNSUPPORTED_COMPRESSION', `unknown compression type ${String(type)}`)
  }
}

/** Decompresses `data` compressed with `type`, producing at most `maxOutput` bytes. */
export function decompress(type: CompressionType, data: Buffer, maxOutput = DEFAULT_MAX_DECOMPRESSED_BYTES, progress: Progress = NO_PROGRESS): Buffer {
  return runSteps(decompressSteps(type, data, maxOutput, progress))
}

/** `decompress` block by block: it pauses (yields) after each block (gzip and none: once, at the end). */
export function* decompressSteps(type: CompressionType, data: Buffer, maxOutput = DEFAULT_MAX_DECOMPRESSED_BYTES, progress: Progress = NO_PROGRESS): Steps<Buffer> {
  let out: Buffer
  switch (type) {
    case 'none':
      if (data.length > maxOutput) throw new OutputLimitError('none', maxOutput)
      out = data
      break
    case 'gzip':
      out = gunzip(data, maxOutput)
      break
    case 'snappy':
      return yield* snappyDecompressSteps(data, maxOutput, progress)
    case 'lz4':
      return yield* lz4DecompressSteps(data, maxOutput, progress)
    case 'zstd':
      return yield* zstdDecompressSteps(data, maxOutput, progress)
    default:
      throw new RecordError('UNSUPPORTED_COMPRESSION', `unknown compression type ${String(type)}`)
  }
  progress(out, out.length)
  return out
}

/** Output chunks of `gunzipAsync`: few callbacks on the event loop per batch. */
const GUNZIP_CHUNK = 1024 * 1024

/**
 * gzip decompressed on zlib's worker threads (node:zlib's streaming Gunzip), never more than
 * `maxOutput` bytes (OutputLimitError); `progress` sees the output after each chunk and may
 * throw to stop. The output is allocated once at the size the gzip trailer declares (ISIZE,
 * exact for one member below 4 GiB) and grown if more comes. The same errors as `decompress`.
 */
export function gunzipAsync(data: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = data.length >= 18 ? data.readUInt32LE(data.length - 4) : 0
    let out = Buffer.allocUnsafe(Math.min(Math.max(declared, 1024), Math.max(1, maxOutput)))
    let op = 0
    let settled = false
    const gunzip = zlib.createGunzip({ chunkSize: GUNZIP_CHUNK })
    const fail = (err: unknown): void => {
      if (settled) return
      settled = true
      gunzip.destroy()
      reject(err)
    }
    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return
      try {
        if (op + chunk.length > maxOutput) throw new OutputLimitError('gzip', maxOutput)
        if (op + chunk.length > out.length) {
          const grown = Buffer.allocUnsafe(Math.min(maxOutput, Math.max(op + chunk.length, 2 * out.length)))
          out.copy(grown, 0, 0, op)
          out = grown
        }
        chunk.copy(out, op)
        op += chunk.length
        progress(out, op)
      } catch (err) {
        fail(err)
      }
    })
    gunzip.on('error', (err) => fail(new RecordError('CORRUPT_RECORD', `gzip: does not decode: ${err.message}`, { cause: err })))
    gunzip.on('end', () => {
      if (settled) return
      settled = true
      resolve(op < out.length >>> 1 ? Buffer.from(out.subarray(0, op)) : out.subarray(0, op))
    })
    gunzip.end(data)
  })
}

function gunzip(data: Buffer, maxOutput: number): Buffer {
  try {
    return zlib.gunzipSync(data, { maxOutputLength: Math.max(1, maxOutput) })
  } catch (err) {
    if ((err as { code?: unknown })?.code === 'ERR_BUFFER_TOO_LARGE') throw new OutputLimitError('gzip', maxOutput)
    throw new RecordError('CORRUPT_RECORD', `gzip: does not decode: ${(err as Error)?.message ?? String(err)}`, { cause: err })
  }
}
