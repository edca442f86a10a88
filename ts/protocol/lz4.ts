/**
 * LZ4 in the frame format, as Kafka's KafkaLZ4BlockOutputStream writes it for magic 2:
 *
 *   magic 0x184D2204 (LE) | FLG | BD | [content size u64 LE] | [dict id u32 LE] | HC
 *   blocks: [size u32 LE, high bit = stored uncompressed][data][block checksum u32 LE if FLG.4]
 *   end mark u32 0 | [content checksum u32 LE if FLG.2]
 *
 * FLG = version 01 (bits 7-6), block independence (5), block checksum (4), content size (3),
 * content checksum (2), reserved (1), dict id (0). BD bits 6-4 = block max size (4: 64 KiB,
 * 5: 256 KiB, 6: 1 MiB, 7: 4 MiB). HC = second byte of xxHash32 (seed 0) of FLG..before HC.
 * Kafka writes FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KiB), no checksums, and
 * stores a block uncompressed when compressing does not make it smaller; so does `lz4Compress`.
 *
 * LZ4 block: sequences of token (literal length << 4 | match length - 4; 15 = more length
 * bytes follow, each added, until one is not 255), literals, offset u16 LE, extra match length.
 * The last sequence has literals only; the last 5 bytes are always literals and the last match
 * starts at least 12 bytes before the end.
 */
import { RecordError } from './record-error.js'
import { NO_PROGRESS, OutputLimitError, copyToSteps, runSteps, type Progress, type Steps } from './output-limit.js'
import { xxh32 } from './xxhash32.js'

const FRAME_MAGIC = 0x184d2204
const FLG_VERSION = 0x40
const FLG_BLOCK_INDEPENDENCE = 0x20
const FLG_BLOCK_CHECKSUM = 0x10
const FLG_CONTENT_SIZE = 0x08
const FLG_CONTENT_CHECKSUM = 0x04
const FLG_RESERVED = 0x02
const FLG_DICT_ID = 0x01
const BD_BLOCK_SIZE_SHIFT = 4
const BD_64KB = 4
const BLOCK_UNCOMPRESSED = 0x80000000

const KAFKA_FLG = FLG_VERSION | FLG_BLOCK_INDEPENDENCE
const KAFKA_BD = BD_64KB << BD_BLOCK_SIZE_SHIFT
const KAFKA_BLOCK_SIZE = 64 * 1024

const MIN_MATCH = 4
const LAST_LITERALS = 5
const MF_LIMIT = 12
const MAX_DISTANCE = 65535
const HASH_LOG = 12

function corrupt(why: string): RecordError {
  return new RecordError('CORRUPT_RECORD', `lz4: ${why}`)
}

/**
 * Decodes the LZ4 block `src[ip, iend)` into `out` from `op`, writing below `olimit`; matches may
 * reach back to `out[0]` (earlier blocks of a frame). Returns the end of the output.
 */
export function lz4DecompressBlock(src: Buffer, ip: number, iend: number, out: Buffer, op: number, olimit: number): number {
  for (;;) {
    if (ip >= iend) throw corrupt('truncated block')
    const token = src[ip++]!
    let lit = token >>> 4
    if (lit === 15) {
      let b: number
      do {
        if (ip >= iend) throw corrupt('truncated literal length')
        b = src[ip++]!
        lit += b
      } while (b === 255)
    }
    if (lit > iend - ip) throw corrupt('literals past the end of the block')
    if (lit > olimit - op) throw corrupt('output larger than allowed')
    if (lit < 16) {
      for (let i = 0; i < lit; i++) out[op + i] = src[ip + i]!
    } else {
      src.copy(out, op, ip, ip + lit)
    }
    ip += lit
    op += lit
    if (ip === iend) return op
    if (ip + 2 > iend) throw corrupt('truncated match offset')
    const offset = src[ip]! | (src[ip + 1]! << 8)
    ip += 2
    if (offset === 0 || offset > op) throw corrupt(`match offset ${offset} out of range`)
    let len = token & 15
    if (len === 15) {
      let b: number
      do {
        if (ip >= iend) throw corrupt('truncated match length')
        b = src[ip++]!
        len += b
      } while (b === 255)
    }
    len += MIN_MATCH
    if (len > olimit - op) throw corrupt('output larger than allowed')
    let from = op - offset
    if (offset >= len && len >= 16) {
      out.copyWithin(op, from, from + len)
      op += len
    } else {
      for (const stop = op + len; op < stop;) out[op++] = out[from++]!
    }
  }
}

function writeLength(out: Buffer, op: number, rest: number): number {
  while (rest >= 255) {
    out[op++] = 255
    rest -= 255
  }
  out[op++] = rest
  return op
}

function load32(b: Buffer, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)
}

let hashTable: Int32Array | null = null

/** Bound on the size of `lz4CompressBlock`'s output for `n` input bytes. */
export function lz4BlockBound(n: number): number {
  return n + Math.floor(n / 255) + 16
}

/** Encodes `src[start, end)` as one LZ4 block into `out` at `op`; returns the end. */
export function lz4CompressBlock(src: Buffer, start: number, end: number, out: Buffer, op: number): number {
  const table = (hashTable ??= new Int32Array(1 << HASH_LOG))
  table.fill(-1)
  let anchor = start
  let ip = start
  const matchLimit = end - LAST_LITERALS
  const searchLimit = end - MF_LIMIT
  while (ip <= searchLimit) {
    const x = load32(src, ip)
    const h = Math.imul(x, 0x9e3779b1) >>> (32 - HASH_LOG)
    const cand = table[h]! // h < 1 << HASH_LOG
    table[h] = ip
    if (cand < start || ip - cand > MAX_DISTANCE || load32(src, cand) !== x) {
      ip += 1 + ((ip - anchor) >>> 6)
      continue
    }
    let len = MIN_MATCH
    while (ip + len < matchLimit && src[cand + len] === src[ip + len]) len++
    const lit = ip - anchor
    const tokenAt = op++
    let token: number
    if (lit >= 15) {
      token = 15 << 4
      op = writeLength(out, op, lit - 15)
    } else {
      token = lit << 4
    }
    src.copy(out, op, anchor, ip)
    op += lit
    const offset = ip - cand
    out[op++] = offset & 0xff
    out[op++] = offset >>> 8
    const ml = len - MIN_MATCH
    if (ml >= 15) {
      token |= 15
      op = writeLength(out, op, ml - 15)
    } else {
      token |= ml
    }
    out[tokenAt] = token
    ip += len
    anchor = ip
  }
  const lit = end - anchor
  if (lit >= 15) {
    out[op++] = 15 << 4
    op = writeLength(out, op, lit - 15)
  } else {
    out[op++] = lit << 4
  }
  src.copy(out, op, anchor, end)
  return op + lit
}

/** Compresses `src` as one LZ4 frame the way Kafka's KafkaLZ4BlockOutputStream does. */
export function lz4Compress(src: Buffer): Buffer {
  const blocks = Math.ceil(src.length / KAFKA_BLOCK_SIZE)
  const out = Buffer.allocUnsafe(7 + blocks * (4 + lz4BlockBound(KAFKA_BLOCK_SIZE)) + 4)
  out.writeUInt32LE(FRAME_MAGIC, 0)
  out[4] = KAFKA_FLG
  out[5] = KAFKA_BD
  out[6] = (xxh32(out, 4, 6) >>> 8) & 0xff
  let op = 7
  for (let at = 0; at < src.length; at += KAFKA_BLOCK_SIZE) {
    const stop = Math.min(src.length, at + KAFKA_BLOCK_SIZE)
    const n = stop - at
    const end = lz4CompressBlock(src, at, stop, out, op + 4)
    const size = end - op - 4
    if (size >= n) {
      out.writeUInt32LE((n | BLOCK_UNCOMPRESSED) >>> 0, op)
      src.copy(out, op + 4, at, stop)
      op += 4 + n
    } else {
      out.writeUInt32LE(size, op)
      op = end
    }
  }
  out.writeUInt32LE(0, op)
  return out.subarray(0, op + 4)
}

/**
 * Decompresses one LZ4 frame, refusing to produce more than `maxOutput` bytes; `progress` sees
 * the output after every block.
 */
export function lz4Decompress(src: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Buffer {
  return runSteps(lz4DecompressSteps(src, maxOutput, progress))
}

/** lz4Decompress one block at a time: it pauses (yields) after each block's `progress`. */
export function* lz4DecompressSteps(src: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Steps<Buffer> {
  const end = src.length
  if (end < 7) throw corrupt('truncated frame header')
  if (src.readUInt32LE(0) !== FRAME_MAGIC) throw corrupt(`bad frame magic 0x${src.readUInt32LE(0).toString(16)}`)
  const flg = src[4]! // end >= 7
  const bd = src[5]!
  if ((flg & 0xc0) !== FLG_VERSION) throw corrupt(`unsupported frame version ${flg >>> 6}`)
  if (flg & FLG_RESERVED || bd & 0x8f) throw corrupt('reserved descriptor bits set')
  if (flg & FLG_DICT_ID) throw corrupt('dictionaries are not supported')
  const sizeCode = (bd >>> BD_BLOCK_SIZE_SHIFT) & 7
  if (sizeCode < 4) throw corrupt(`invalid block max size code ${sizeCode}`)
  const blockMax = 1 << (8 + 2 * sizeCode)
  let pos = 6
  let contentSize = -1
  if (flg & FLG_CONTENT_SIZE) {
    if (end < pos + 9) throw corrupt('truncated frame header')
    const hi = src.readUInt32LE(pos + 4)
    contentSize = hi === 0 ? src.readUInt32LE(pos) : Infinity
    if (contentSize > maxOutput) throw new OutputLimitError('lz4', maxOutput, 'content size')
    pos += 8
  }
  if (((xxh32(src, 4, pos) >>> 8) & 0xff) !== src[pos]) throw corrupt('frame descriptor checksum mismatch')
  pos++

  let out: Buffer = Buffer.allocUnsafe(contentSize >= 0 ? contentSize : Math.min(maxOutput, Math.max(KAFKA_BLOCK_SIZE, 4 * end)))
  let op = 0
  for (;;) {
    if (end - pos < 4) throw corrupt('truncated block size')
    const word = src.readUInt32LE(pos)
    pos += 4
    if (word === 0) break
    const size = word & 0x7fffffff
    if (size > blockMax) throw corrupt(`block size ${size} exceeds the frame's maximum ${blockMax}`)
    const dataEnd = pos + size
    const blockEnd = flg & FLG_BLOCK_CHECKSUM ? dataEnd + 4 : dataEnd
    if (blockEnd > end) throw corrupt('truncated block')
    if (flg & FLG_BLOCK_CHECKSUM && xxh32(src, pos, dataEnd) !== src.readUInt32LE(dataEnd)) {
      throw corrupt('block checksum mismatch')
    }
    const want = Math.min(op + (word & BLOCK_UNCOMPRESSED ? size : blockMax), maxOutput)
    if (want > out.length && contentSize < 0) out = yield* copyToSteps(out, op, Math.min(maxOutput, Math.max(want, 2 * out.length)))
    if (word & BLOCK_UNCOMPRESSED) {
      if (size > out.length - op) throw corrupt('output larger than allowed')
      src.copy(out, op, pos, dataEnd)
      op += size
    } else {
      op = lz4DecompressBlock(src, pos, dataEnd, out, op, Math.min(out.length, op + blockMax))
    }
    pos = blockEnd
    progress(out, op)
    yield
  }
  if (flg & FLG_CONTENT_CHECKSUM) {
    if (end - pos < 4) throw corrupt('truncated content checksum')
    if (xxh32(out, 0, op) !== src.readUInt32LE(pos)) throw corrupt('content checksum mismatch')
  }
  if (contentSize >= 0 && op !== contentSize) throw corrupt(`frame yields ${op} bytes, announced ${contentSize}`)
  return out.subarray(0, op)
}
