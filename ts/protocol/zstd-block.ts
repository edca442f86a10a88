/**
 * One compressed Zstandard block (RFC 8878 3.1.1.3): the literals section (raw, RLE, or Huffman
 * coded in 1 or 4 streams, with a new tree or the previous one) and the sequences section (a
 * count, the three code modes: predefined, RLE, FSE table, or repeat; then one backward bitstream
 * of (literal length, match length, offset) triples), executed into the frame's output.
 * zstd.ts handles frames and the other block types.
 */
import {
  LL_BASE,
  LL_BITS,
  LL_DEFAULT_COUNTS,
  ML_BASE,
  ML_BITS,
  ML_DEFAULT_COUNTS,
  OF_DEFAULT_COUNTS,
  type FseTable,
  type HuffmanTable,
  bitsAt,
  buildFseTable,
  decodeHuffmanStream,
  longBitsAt,
  readFseTable,
  readHuffmanTable,
  rleFseTable,
  streamStart,
  zstdCorrupt as corrupt,
} from './zstd-entropy.js'

const BLOCK_MAX = 128 * 1024

const LITERALS_RAW = 0
const LITERALS_RLE = 1
const LITERALS_COMPRESSED = 2

const MODE_PREDEFINED = 0
const MODE_RLE = 1
const MODE_FSE = 2

const MAX_LL = 35
const MAX_ML = 52
const MAX_OF = 31

const LL_DEFAULT = buildFseTable(LL_DEFAULT_COUNTS, LL_DEFAULT_COUNTS.length, 6)
const ML_DEFAULT = buildFseTable(ML_DEFAULT_COUNTS, ML_DEFAULT_COUNTS.length, 6)
const OF_DEFAULT = buildFseTable(OF_DEFAULT_COUNTS, OF_DEFAULT_COUNTS.length, 5)

/** Decoded literals of a block: Huffman output lands here (raw literals are read in place). */
let literalScratch: Uint8Array | null = null

/** What one frame's decoding carries from block to block. */
export interface FrameState {
  huffman: HuffmanTable | null
  ll: FseTable | null
  of: FseTable | null
  ml: FseTable | null
  rep1: number
  rep2: number
  rep3: number
  /** Where the frame's output starts (matches reach no further back). */
  start: number
}

/** Decodes the literals section at `src[pos]` into the state; returns [source, start, end, next pos]. */
function readLiterals(src: Uint8Array, pos: number, end: number, f: FrameState, blockMax: number): [Uint8Array, number, number, number] {
  const b0 = src[pos]!
  const type = b0 & 3
  const sizeFormat = (b0 >>> 2) & 3
  if (type === LITERALS_RAW || type === LITERALS_RLE) {
    let size: number
    if ((sizeFormat & 1) === 0) {
      size = b0 >>> 3
      pos += 1
    } else if (sizeFormat === 1) {
      if (end - pos < 2) throw corrupt('truncated literals header')
      size = (b0 >>> 4) + (src[pos + 1]! << 4)
      pos += 2
    } else {
      if (end - pos < 3) throw corrupt('truncated literals header')
      size = (b0 >>> 4) + (src[pos + 1]! << 4) + (src[pos + 2]! << 12)
      pos += 3
    }
    if (size > blockMax) throw corrupt('literals larger than a block')
    if (type === LITERALS_RAW) {
      if (end - pos < size) throw corrupt('truncated literals')
      return [src, pos, pos + size, pos + size]
    }
    if (pos >= end) throw corrupt('truncated literals')
    const scratch = (literalScratch ??= new Uint8Array(BLOCK_MAX))
    scratch.fill(src[pos]!, 0, size)
    return [scratch, 0, size, pos + 1]
  }
  // Huffman-coded literals, with a new tree or the previous one (treeless).
  let regenerated: number
  let compressed: number
  let headerSize: number
  const streams = sizeFormat === 0 ? 1 : 4
  if (sizeFormat <= 1) {
    headerSize = 3
    if (end - pos < 3) throw corrupt('truncated literals header')
    const v = b0 | (src[pos + 1]! << 8) | (src[pos + 2]! << 16)
    regenerated = (v >>> 4) & 0x3ff
    compressed = (v >>> 14) & 0x3ff
  } else if (sizeFormat === 2) {
    headerSize = 4
    if (end - pos < 4) throw corrupt('truncated literals header')
    const v = (b0 | (src[pos + 1]! << 8) | (src[pos + 2]! << 16) | (src[pos + 3]! << 24)) >>> 0
    regenerated = (v >>> 4) & 0x3fff
    compressed = (v >>> 18) & 0x3fff
  } else {
    headerSize = 5
    if (end - pos < 5) throw corrupt('truncated literals header')
    const v = (b0 | (src[pos + 1]! << 8) | (src[pos + 2]! << 16) | (src[pos + 3]! << 24)) >>> 0
    regenerated = (v >>> 4) & 0x3ffff
    compressed = ((v >>> 22) | (src[pos + 4]! << 10)) & 0x3ffff
  }
  if (regenerated > blockMax) throw corrupt('literals larger than a block')
  pos += headerSize
  const stop = pos + compressed
  if (stop > end) throw corrupt('truncated literals')
  if (type === LITERALS_COMPRESSED) {
    const read = readHuffmanTable(src, pos, stop)
    f.huffman = read.table
    pos = read.pos
  } else if (f.huffman === null) {
    throw corrupt('treeless literals without a previous Huffman tree')
  }
  const table = f.huffman
  const out = (literalScratch ??= new Uint8Array(BLOCK_MAX))
  if (streams === 1) {
    decodeHuffmanStream(src, pos, stop, table, out, 0, regenerated)
  } else {
    if (stop - pos < 10) throw corrupt('truncated literals jump table')
    const s1 = src[pos]! | (src[pos + 1]! << 8)
    const s2 = src[pos + 2]! | (src[pos + 3]! << 8)
    const s3 = src[pos + 4]! | (src[pos + 5]! << 8)
    const a = pos + 6
    const b = a + s1
    const c = b + s2
    const d = c + s3
    if (d >= stop) throw corrupt('literals jump table past the end')
    const segment = Math.floor((regenerated + 3) / 4)
    const lastSegment = regenerated - 3 * segment
    if (lastSegment < 0) throw corrupt('too few literals for four streams')
    decodeHuffmanStream(src, a, b, table, out, 0, segment)
    decodeHuffmanStream(src, b, c, table, out, segment, segment)
    decodeHuffmanStream(src, c, d, table, out, 2 * segment, segment)
    decodeHuffmanStream(src, d, stop, table, out, 3 * segment, lastSegment)
  }
  return [out, 0, regenerated, stop]
}

function readTable(src: Uint8Array, pos: number, end: number, mode: number, predefined: FseTable, previous: FseTable | null, maxLog: number, maxSymbol: number): { table: FseTable; pos: number } {
  switch (mode) {
    case MODE_PREDEFINED:
      return { table: predefined, pos }
    case MODE_RLE:
      if (pos >= end) throw corrupt('truncated sequences header')
      if (src[pos]! > maxSymbol) throw corrupt('RLE symbol out of range')
      return { table: rleFseTable(src[pos]!), pos: pos + 1 }
    case MODE_FSE:
      return readFseTable(src, pos, end, maxLog, maxSymbol)
    default:
      if (previous === null) throw corrupt('repeated FSE table without a previous one')
      return { table: previous, pos }
  }
}

/**
 * Decodes one compressed block `src[pos, end)` into `out` from `op`, writing below `limit`;
 * returns the end of its output.
 */
export function decodeCompressedBlock(src: Uint8Array, pos: number, end: number, out: Uint8Array, op: number, limit: number, f: FrameState, blockMax: number): number {
  if (pos >= end) throw corrupt('empty compressed block')
  const [lit, litStart, litEnd, seqAt] = readLiterals(src, pos, end, f, blockMax)
  let lp = litStart
  pos = seqAt
  if (pos >= end) throw corrupt('truncated sequences section')
  let nbSeq = src[pos++]!
  if (nbSeq >= 128) {
    if (nbSeq === 255) {
      if (end - pos < 2) throw corrupt('truncated sequences header')
      nbSeq = src[pos]! + (src[pos + 1]! << 8) + 0x7f00
      pos += 2
    } else {
      if (pos >= end) throw corrupt('truncated sequences header')
      nbSeq = ((nbSeq - 128) << 8) + src[pos++]!
    }
  }
  if (nbSeq > 0) {
    if (pos >= end) throw corrupt('truncated sequences header')
    const modes = src[pos++]!
    if (modes & 3) throw corrupt('reserved sequence mode bits set')
    const llRead = readTable(src, pos, end, modes >>> 6, LL_DEFAULT, f.ll, 9, MAX_LL)
    const ofRead = readTable(src, llRead.pos, end, (modes >>> 4) & 3, OF_DEFAULT, f.of, 8, MAX_OF)
    const mlRead = readTable(src, ofRead.pos, end, (modes >>> 2) & 3, ML_DEFAULT, f.ml, 9, MAX_ML)
    const ll = (f.ll = llRead.table)
    const of = (f.of = ofRead.table)
    const ml = (f.ml = mlRead.table)
    pos = mlRead.pos
    const lower = pos * 8
    let bp = streamStart(src, pos, end)
    bp -= ll.log
    if (bp < lower) throw corrupt('truncated sequences bitstream')
    let llState = bitsAt(src, bp, ll.log)
    bp -= of.log
    if (bp < lower) throw corrupt('truncated sequences bitstream')
    let ofState = bitsAt(src, bp, of.log)
    bp -= ml.log
    if (bp < lower) throw corrupt('truncated sequences bitstream')
    let mlState = bitsAt(src, bp, ml.log)
    let { rep1, rep2, rep3 } = f
    const frameStart = f.start
    for (let i = 0; i < nbSeq; i++) {
      const ofCode = of.symbol[ofState]!
      const mlCode = ml.symbol[mlState]!
      const llCode = ll.symbol[llState]!
      if (ofCode > MAX_OF || mlCode > MAX_ML || llCode > MAX_LL) throw corrupt('sequence code out of range')
      bp -= ofCode
      if (bp < lower) throw corrupt('sequences bitstream overflow')
      const ofValue = 2 ** ofCode + longBitsAt(src, bp, ofCode)
      let n = ML_BITS[mlCode]!
      bp -= n
      if (bp < lower) throw corrupt('sequences bitstream overflow')
      const matchLength = ML_BASE[mlCode]! + (n ? bitsAt(src, bp, n) : 0)
      n = LL_BITS[llCode]!
      bp -= n
      if (bp < lower) throw corrupt('sequences bitstream overflow')
      const literalLength = LL_BASE[llCode]! + (n ? bitsAt(src, bp, n) : 0)
      // Repeat offsets (RFC 8878 3.1.1.5).
      let offset: number
      if (ofValue > 3) {
        offset = ofValue - 3
        rep3 = rep2
        rep2 = rep1
        rep1 = offset
      } else {
        const idx = ofValue - 1 + (literalLength === 0 ? 1 : 0)
        if (idx === 0) {
          offset = rep1
        } else {
          offset = idx === 1 ? rep2 : idx === 2 ? rep3 : rep1 - 1
          if (offset === 0) throw corrupt('repeat offset of 0')
          if (idx !== 1) rep3 = rep2
          rep2 = rep1
          rep1 = offset
        }
      }
      if (i + 1 < nbSeq) {
        n = ll.nbBits[llState]!
        bp -= n
        if (bp < lower) throw corrupt('sequences bitstream overflow')
        llState = ll.baseline[llState]! + (n ? bitsAt(src, bp, n) : 0)
        n = ml.nbBits[mlState]!
        bp -= n
        if (bp < lower) throw corrupt('sequences bitstream overflow')
        mlState = ml.baseline[mlState]! + (n ? bitsAt(src, bp, n) : 0)
        n = of.nbBits[ofState]!
        bp -= n
        if (bp < lower) throw corrupt('sequences bitstream overflow')
        ofState = of.baseline[ofState]! + (n ? bitsAt(src, bp, n) : 0)
      }
      // Execute: literals, then the match.
      if (literalLength > litEnd - lp) throw corrupt('sequence uses more literals than decoded')
      if (literalLength + matchLength > limit - op) throw corrupt('output past the block maximum or the output limit')
      if (literalLength < 64) {
        for (let k = 0; k < literalLength; k++) out[op + k] = lit[lp + k]!
      } else {
        out.set(lit.subarray(lp, lp + literalLength), op)
      }
      op += literalLength
      lp += literalLength
      if (offset > op - frameStart) throw corrupt(`match offset ${offset} beyond the start of the frame`)
      let from = op - offset
      if (offset >= matchLength && matchLength >= 64) {
        out.copyWithin(op, from, from + matchLength)
        op += matchLength
      } else {
        for (const stop = op + matchLength; op < stop;) out[op++] = out[from++]!
      }
    }
    if (bp !== lower) throw corrupt('sequences bitstream not fully consumed')
    f.rep1 = rep1
    f.rep2 = rep2
    f.rep3 = rep3
  } else if (pos !== end) {
    throw corrupt('bytes after a block without sequences')
  }
  const rest = litEnd - lp
  if (rest > limit - op) throw corrupt('output past the block maximum or the output limit')
  out.set(lit.subarray(lp, litEnd), op)
  return op + rest
}
