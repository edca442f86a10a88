/**
 * Snappy, as Kafka carries it: raw Snappy blocks inside the framing of xerial's snappy-java
 * (SnappyOutputStream), which the Java client writes:
 *
 *   header  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00, version int32 BE (1), compatible version int32 BE (1)
 *   chunks  [compressed length int32 BE][raw Snappy block], each block holding up to 32 KiB
 *
 * A stream without the header is one raw Snappy block (librdkafka writes that; snappy-java's
 * SnappyInputStream accepts both, and so does `snappyDecompress`). A header met again between
 * chunks (streams concatenated) is skipped, as snappy-java does.
 *
 * Raw Snappy block: the uncompressed length as an unsigned varint, then elements whose tag byte's
 * low 2 bits give the kind: 00 literal (length-1 in the upper 6 bits, or 60..63 = 1..4 length
 * bytes LE follow), 01 copy of 4..11 bytes with an 11-bit offset, 10 copy of 1..64 bytes with a
 * 16-bit LE offset, 11 the same with a 32-bit LE offset.
 */
import { NO_PROGRESS, OutputLimitError, runSteps, type Progress, type Steps } from './output-limit.js'
import { RecordError } from './record-error.js'
import { Cursor, readUnsignedVarint, writeUnsignedVarint } from './varint.js'

const XERIAL_MAGIC = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]
const XERIAL_HEADER_SIZE = 16
const XERIAL_VERSION = 1
const XERIAL_COMPATIBLE_VERSION = 1
/** snappy-java's default block size. */
const XERIAL_BLOCK_SIZE = 32 * 1024
/** The reference compressor works on fragments of 64 KiB, so copy offsets fit 16 bits. */
const FRAGMENT_SIZE = 64 * 1024
const HASH_LOG = 14

const LITERAL = 0
const COPY_1 = 1
const COPY_2 = 2 // and 3: a copy with a 4-byte offset

function corrupt(why: string): RecordError {
  return new RecordError('CORRUPT_RECORD', `snappy: ${why}`)
}

function isXerialHeader(src: Buffer, at: number, end: number): boolean {
  if (end - at < XERIAL_MAGIC.length) return false
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (src[at + i] !== XERIAL_MAGIC[i]) return false
  return true
}

/** The uncompressed length a raw Snappy block announces, and where its elements start. */
function rawLength(src: Buffer, start: number, end: number): { length: number; body: number } {
  const c = new Cursor(src, start, end)
  try {
    const length = readUnsignedVarint(c)
    return { length, body: c.pos }
  } catch {
    throw corrupt('bad length preamble')
  }
}

/** Decodes the raw block `src[start, end)` into `out` at `op`; it must yield exactly `length` bytes. */
function decompressRawInto(src: Buffer, ip: number, end: number, out: Buffer, op: number, length: number): number {
  const olimit = op + length
  const ostart = op
  while (ip < end) {
    const tag = src[ip++]!
    const kind = tag & 3
    if (kind === LITERAL) {
      let n = tag >>> 2
      if (n >= 60) {
        const extra = n - 59
        if (ip + extra > end) throw corrupt('truncated literal length')
        n = src[ip]! | (extra > 1 ? src[ip + 1]! << 8 : 0) | (extra > 2 ? src[ip + 2]! << 16 : 0)
        if (extra > 3) n = (n | (src[ip + 3]! << 24)) >>> 0
        ip += extra
      }
      n += 1
      if (n > end - ip) throw corrupt('literal past the end of the input')
      if (n > olimit - op) throw corrupt('literal past the announced length')
      if (n < 16) {
        for (let i = 0; i < n; i++) out[op + i] = src[ip + i]!
      } else {
        src.copy(out, op, ip, ip + n)
      }
      ip += n
      op += n
      continue
    }
    let len: number
    let offset: number
    if (kind === COPY_1) {
      if (ip >= end) throw corrupt('truncated copy')
      len = 4 + ((tag >>> 2) & 7)
      offset = ((tag >>> 5) << 8) | src[ip++]!
    } else if (kind === COPY_2) {
      if (ip + 2 > end) throw corrupt('truncated copy')
      len = (tag >>> 2) + 1
      offset = src[ip]! | (src[ip + 1]! << 8)
      ip += 2
    } else {
      // COPY_4
      if (ip + 4 > end) throw corrupt('truncated copy')
      len = (tag >>> 2) + 1
      offset = (src[ip]! | (src[ip + 1]! << 8) | (src[ip + 2]! << 16) | (src[ip + 3]! << 24)) >>> 0
      ip += 4
    }
    if (offset === 0 || offset > op - ostart) throw corrupt(`copy offset ${offset} out of range`)
    if (len > olimit - op) throw corrupt('copy past the announced length')
    let from = op - offset
    if (offset >= len && len >= 16) {
      out.copyWithin(op, from, from + len)
      op += len
    } else {
      for (const stop = op + len; op < stop;) out[op++] = out[from++]!
    }
  }
  if (op !== olimit) throw corrupt(`block yields ${op - ostart} bytes, announced ${length}`)
  return op
}

/**
 * Decompresses Snappy data in snappy-java's framing (or one raw block), refusing to produce
 * more than `maxOutput` bytes; `progress` sees the output after every chunk.
 */
export function snappyDecompress(src: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Buffer {
  return runSteps(snappyDecompressSteps(src, maxOutput, progress))
}

/** snappyDecompress one chunk at a time: it pauses (yields) after each chunk's `progress`. */
export function* snappyDecompressSteps(src: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Steps<Buffer> {
  const end = src.length
  if (!isXerialHeader(src, 0, end)) {
    const { length, body } = rawLength(src, 0, end)
    if (length > maxOutput) throw new OutputLimitError('snappy', maxOutput)
    const out = Buffer.allocUnsafe(length)
    decompressRawInto(src, body, end, out, 0, length)
    progress(out, length)
    return out
  }
  // First pass: chunk bounds and lengths, so the output is allocated once.
  const chunks: { body: number; end: number; length: number }[] = []
  let total = 0
  let pos = 0
  while (pos < end) {
    if (isXerialHeader(src, pos, end)) {
      if (end - pos < XERIAL_HEADER_SIZE) throw corrupt('truncated stream header')
      pos += XERIAL_HEADER_SIZE
      continue
    }
    if (end - pos < 4) throw corrupt('truncated chunk length')
    const size = src.readInt32BE(pos)
    pos += 4
    if (size < 0 || size > end - pos) throw corrupt(`chunk length ${size} out of range`)
    const { length, body } = rawLength(src, pos, pos + size)
    total += length
    if (total > maxOutput) throw new OutputLimitError('snappy', maxOutput)
    chunks.push({ body, end: pos + size, length })
    pos += size
  }
  const out = Buffer.allocUnsafe(total)
  let op = 0
  for (const chunk of chunks) {
    op = decompressRawInto(src, chunk.body, chunk.end, out, op, chunk.length)
    progress(out, op)
    yield
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Compression: greedy matching over a hash of 4-byte groups, fragment by fragment.

let hashTable: Int32Array | null = null

function load32(b: Buffer, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)
}

function hash4(x: number): number {
  return Math.imul(x, 0x1e35a7bd) >>> (32 - HASH_LOG)
}

function emitLiteral(src: Buffer, from: number, to: number, out: Buffer, op: number): number {
  const n = to - from
  if (n === 0) return op
  const n1 = n - 1
  if (n1 < 60) {
    out[op++] = n1 << 2
  } else if (n1 < 0x100) {
    out[op++] = 60 << 2
    out[op++] = n1
  } else if (n1 < 0x10000) {
    out[op++] = 61 << 2
    out[op++] = n1 & 0xff
    out[op++] = n1 >>> 8
  } else if (n1 < 0x1000000) {
    out[op++] = 62 << 2
    out[op++] = n1 & 0xff
    out[op++] = (n1 >>> 8) & 0xff
    out[op++] = n1 >>> 16
  } else {
    out[op++] = 63 << 2
    op = out.writeUInt32LE(n1, op)
  }
  if (n < 16) {
    for (let i = 0; i < n; i++) out[op + i] = src[from + i]!
  } else {
    src.copy(out, op, from, to)
  }
  return op + n
}

function emitCopy2(offset: number, len: number, out: Buffer, op: number): number {
  out[op++] = COPY_2 | ((len - 1) << 2)
  out[op++] = offset & 0xff
  out[op++] = offset >>> 8
  return op
}

function emitCopy(offset: number, len: number, out: Buffer, op: number): number {
  while (len >= 68) {
    op = emitCopy2(offset, 64, out, op)
    len -= 64
  }
  if (len > 64) {
    op = emitCopy2(offset, 60, out, op)
    len -= 60
  }
  if (len >= 12 || offset >= 2048) return emitCopy2(offset, len, out, op)
  out[op++] = COPY_1 | ((len - 4) << 2) | ((offset >>> 8) << 5)
  out[op++] = offset & 0xff
  return op
}

function compressFragment(src: Buffer, start: number, end: number, out: Buffer, op: number, table: Int32Array): number {
  let lit = start
  let ip = start
  const limit = end - 4
  while (ip <= limit) {
    const x = load32(src, ip)
    const h = hash4(x)
    const cand = table[h]! // h < 1 << HASH_LOG
    table[h] = ip
    if (cand >= start && load32(src, cand) === x) {
      op = emitLiteral(src, lit, ip, out, op)
      let len = 4
      while (ip + len < end && src[cand + len] === src[ip + len]) len++
      op = emitCopy(ip - cand, len, out, op)
      ip += len
      lit = ip
      if (ip - 1 <= limit) table[hash4(load32(src, ip - 1))] = ip - 1
    } else {
      // Skip faster through data that does not match.
      ip += 1 + ((ip - lit) >>> 5)
    }
  }
  return emitLiteral(src, lit, end, out, op)
}

function maxRawSize(n: number): number {
  return 32 + n + Math.floor(n / 6)
}

/** Writes `src[start, end)` as one raw Snappy block into `out` at `op`; returns the end. */
function compressRawInto(src: Buffer, start: number, end: number, out: Buffer, op: number): number {
  op = writeUnsignedVarint(out, end - start, op)
  const table = (hashTable ??= new Int32Array(1 << HASH_LOG))
  table.fill(-1)
  for (let f = start; f < end; f += FRAGMENT_SIZE) {
    op = compressFragment(src, f, Math.min(end, f + FRAGMENT_SIZE), out, op, table)
  }
  return op
}

/** Compresses `src[start, end)` into one raw Snappy block. */
export function snappyCompressRaw(src: Buffer, start = 0, end = src.length): Buffer {
  const out = Buffer.allocUnsafe(maxRawSize(end - start))
  return out.subarray(0, compressRawInto(src, start, end, out, 0))
}

/** Compresses `src` the way snappy-java's SnappyOutputStream does: header, then 32 KiB chunks. */
export function snappyCompress(src: Buffer): Buffer {
  const chunks = Math.ceil(src.length / XERIAL_BLOCK_SIZE)
  const out = Buffer.allocUnsafe(XERIAL_HEADER_SIZE + chunks * (4 + maxRawSize(XERIAL_BLOCK_SIZE)))
  out.set(XERIAL_MAGIC, 0)
  out.writeInt32BE(XERIAL_VERSION, 8)
  out.writeInt32BE(XERIAL_COMPATIBLE_VERSION, 12)
  let op = XERIAL_HEADER_SIZE
  for (let at = 0; at < src.length; at += XERIAL_BLOCK_SIZE) {
    const blockStart = op + 4
    op = compressRawInto(src, at, Math.min(src.length, at + XERIAL_BLOCK_SIZE), out, blockStart)
    out.writeInt32BE(op - blockStart, blockStart - 4)
  }
  return out.subarray(0, op)
}
