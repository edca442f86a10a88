/**
 * A small Zstandard encoder (RFC 8878), so that the pure-TypeScript engine writes zstd batches on
 * any Node (node:zlib has zstd only from 22.15). It trades ratio for simplicity: greedy LZ77
 * matching over the whole input, literals stored raw, sequences coded with the predefined FSE
 * distributions (no tables to transmit), offsets never as repeat codes. Any zstd decoder reads
 * it; its output is larger than libzstd's (which also Huffman-codes the literals).
 *
 *   frame  magic | descriptor: single segment, content size (1, 2, 4 or 8 bytes), no checksum
 *   block  a compressed block per 128 KiB of input, or a raw block where that is not smaller
 *
 * FSE encoding (tANS) mirrors the decoding table: for each symbol its states are the table cells
 * holding it, in order; encoding a symbol writes the low bits of the state and moves to the cell
 * of the symbol's range that the remaining high bits select. Sequences are encoded last to first
 * into a forward bitstream, which the decoder reads backward.
 */
import { LL_BASE, LL_BITS, LL_DEFAULT_COUNTS, ML_BASE, ML_BITS, ML_DEFAULT_COUNTS, OF_DEFAULT_COUNTS, buildFseTable, highBit } from './zstd-entropy.js'

const ZSTD_MAGIC = 0xfd2fb528
const BLOCK_MAX = 128 * 1024
/** Our decoder (like libzstd by default) accepts windows up to 2^27; frames stay below it. */
const MAX_FRAME = 1 << 27
const MIN_MATCH = 4
const HASH_LOG = 16
const BLOCK_RAW = 0
const BLOCK_COMPRESSED = 2

/** FSE encoding table: per symbol (deltaNbBits, deltaFindState), and the next states. */
interface FseEncoder {
  log: number
  deltaNbBits: Int32Array
  deltaFindState: Int32Array
  nextState: Uint16Array
}

function fseEncoder(counts: number[], log: number): FseEncoder {
  const size = 1 << log
  const decode = buildFseTable(counts, counts.length, log)
  const symbols = counts.length
  const cumul = new Int32Array(symbols + 1)
  for (let s = 0; s < symbols; s++) cumul[s + 1] = cumul[s]! + (counts[s] === -1 ? 1 : counts[s]!)
  const nextState = new Uint16Array(size)
  const at = cumul.slice()
  for (let u = 0; u < size; u++) nextState[at[decode.symbol[u]!]!++] = size + u
  const deltaNbBits = new Int32Array(symbols)
  const deltaFindState = new Int32Array(symbols)
  for (let s = 0; s < symbols; s++) {
    const c = counts[s]!
    if (c === 0) continue
    if (c === -1 || c === 1) {
      deltaNbBits[s] = (log << 16) - size
      deltaFindState[s] = cumul[s]! - 1
    } else {
      const maxBitsOut = log - highBit(c - 1)
      deltaNbBits[s] = (maxBitsOut << 16) - (c << maxBitsOut)
      deltaFindState[s] = cumul[s]! - c
    }
  }
  return { log, deltaNbBits, deltaFindState, nextState }
}

const LL_ENC = fseEncoder(LL_DEFAULT_COUNTS, 6)
const ML_ENC = fseEncoder(ML_DEFAULT_COUNTS, 6)
const OF_ENC = fseEncoder(OF_DEFAULT_COUNTS, 5)
/** The predefined offset distribution has codes 0..28. */
const MAX_OFFSET = 2 ** 29 - 4

function llCode(ll: number): number {
  if (ll < 16) return ll
  if (ll >= 64) return highBit(ll) + 19
  let c = 16
  while (LL_BASE[c + 1]! <= ll) c++
  return c
}

function mlCode(ml: number): number {
  const base = ml - 3
  if (base < 32) return base
  if (base >= 128) return highBit(base) + 36
  let c = 32
  while (ML_BASE[c + 1]! <= ml) c++
  return c
}

/** A forward bitstream, least significant bits first. */
class BitWriter {
  out: Buffer
  pos: number
  private acc = 0
  private count = 0

  constructor(out: Buffer, pos: number) {
    this.out = out
    this.pos = pos
  }

  add(value: number, n: number): void {
    if (n > 24) {
      this.add(value & 0xffffff, 24)
      this.add(Math.floor(value / 0x1000000), n - 24)
      return
    }
    this.acc = (this.acc | ((value & ((1 << n) - 1)) << this.count)) >>> 0
    this.count += n
    while (this.count >= 8) {
      this.out[this.pos++] = this.acc & 0xff
      this.acc >>>= 8
      this.count -= 8
    }
  }

  /** Adds the end mark and flushes the last partial byte. */
  close(): number {
    this.add(1, 1)
    if (this.count > 0) this.out[this.pos++] = this.acc & 0xff
    this.acc = 0
    this.count = 0
    return this.pos
  }
}

let hashTable: Int32Array | null = null
let sequences: Sequences | null = null

function load32(b: Buffer, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)
}

/** Sequences of one block, as parallel arrays. */
interface Sequences {
  count: number
  lit: Int32Array
  match: Int32Array
  offset: Int32Array
}

/**
 * Finds greedy matches in `src[start, end)` against everything since `frameStart`; fills `seq`
 * and returns where the trailing literals start.
 */
function findSequences(src: Buffer, frameStart: number, start: number, end: number, table: Int32Array, shift: number, seq: Sequences): number {
  let anchor = start
  let ip = start
  seq.count = 0
  const limit = end - MIN_MATCH
  while (ip <= limit) {
    const x = load32(src, ip)
    const h = Math.imul(x, 0x9e3779b1) >>> shift
    const cand = table[h]!
    table[h] = ip
    if (cand < frameStart || ip - cand > MAX_OFFSET || load32(src, cand) !== x) {
      ip += 1 + ((ip - anchor) >>> 7)
      continue
    }
    let len = MIN_MATCH
    while (ip + len + 4 <= end && load32(src, cand + len) === load32(src, ip + len)) len += 4
    while (ip + len < end && src[cand + len] === src[ip + len]) len++
    // Extend backwards over literals that match too.
    let back = 0
    while (ip - back > anchor && cand - back > frameStart && src[ip - back - 1] === src[cand - back - 1]) back++
    const n = seq.count++
    seq.lit[n] = ip - back - anchor
    seq.match[n] = len + back
    seq.offset[n] = ip - cand
    ip += len
    anchor = ip
    if (ip - 2 > limit) break
    table[Math.imul(load32(src, ip - 2), 0x9e3779b1) >>> shift] = ip - 2
  }
  return anchor
}

/** Writes the compressed block body (literals + sequences) of `src[start, end)`; returns its end. */
function writeBlockBody(src: Buffer, start: number, end: number, seq: Sequences, literalsEnd: number, out: Buffer, op: number): number {
  // Literals section: every literal, raw, in sequence order.
  let literals = 0
  for (let i = 0; i < seq.count; i++) literals += seq.lit[i]!
  literals += end - literalsEnd
  if (literals < 32) {
    out[op++] = literals << 3
  } else if (literals < 4096) {
    out[op++] = ((literals & 15) << 4) | 0x04
    out[op++] = literals >>> 4
  } else {
    out[op++] = ((literals & 15) << 4) | 0x0c
    out[op++] = (literals >>> 4) & 0xff
    out[op++] = literals >>> 12
  }
  let p = start
  for (let i = 0; i < seq.count; i++) {
    const n = seq.lit[i]!
    if (n < 32) {
      for (let k = 0; k < n; k++) out[op + k] = src[p + k]!
    } else {
      src.copy(out, op, p, p + n)
    }
    op += n
    p += n + seq.match[i]!
  }
  src.copy(out, op, literalsEnd, end)
  op += end - literalsEnd

  // Sequences section.
  const n = seq.count
  if (n < 128) {
    out[op++] = n
  } else if (n < 0x7f00) {
    out[op++] = (n >>> 8) + 128
    out[op++] = n & 0xff
  } else {
    out[op++] = 255
    out[op++] = (n - 0x7f00) & 0xff
    out[op++] = (n - 0x7f00) >>> 8
  }
  if (n === 0) return op
  out[op++] = 0 // all three codes use the predefined distributions

  const bits = new BitWriter(out, op)
  let llState = 0
  let mlState = 0
  let ofState = 0
  for (let i = n - 1; i >= 0; i--) {
    const ll = seq.lit[i]!
    const ml = seq.match[i]!
    const ofValue = seq.offset[i]! + 3
    const llc = llCode(ll)
    const mlc = mlCode(ml)
    const ofc = highBit(ofValue)
    if (i === n - 1) {
      mlState = initState(ML_ENC, mlc)
      ofState = initState(OF_ENC, ofc)
      llState = initState(LL_ENC, llc)
    } else {
      ofState = encodeSymbol(bits, OF_ENC, ofState, ofc)
      mlState = encodeSymbol(bits, ML_ENC, mlState, mlc)
      llState = encodeSymbol(bits, LL_ENC, llState, llc)
    }
    bits.add(ll - LL_BASE[llc]!, LL_BITS[llc]!)
    bits.add(ml - ML_BASE[mlc]!, ML_BITS[mlc]!)
    bits.add(ofValue - (1 << ofc), ofc)
  }
  bits.add(mlState, ML_ENC.log)
  bits.add(ofState, OF_ENC.log)
  bits.add(llState, LL_ENC.log)
  return bits.close()
}

function initState(t: FseEncoder, symbol: number): number {
  const delta = t.deltaNbBits[symbol]!
  const nbBits = (delta + (1 << 15)) >>> 16
  const value = (nbBits << 16) - delta
  return t.nextState[(value >>> nbBits) + t.deltaFindState[symbol]!]!
}

function encodeSymbol(bits: BitWriter, t: FseEncoder, state: number, symbol: number): number {
  const nbBits = (state + t.deltaNbBits[symbol]!) >>> 16
  bits.add(state, nbBits)
  return t.nextState[(state >>> nbBits) + t.deltaFindState[symbol]!]!
}

function writeFrameHeader(out: Buffer, op: number, size: number): number {
  op = out.writeUInt32LE(ZSTD_MAGIC, op)
  // Single segment (the window is the content), content size in the fewest bytes.
  if (size < 256) {
    out[op++] = 0x20
    out[op++] = size
  } else if (size < 65536 + 256) {
    out[op++] = 0x60
    op = out.writeUInt16LE(size - 256, op)
  } else {
    out[op++] = 0xa0
    op = out.writeUInt32LE(size, op)
  }
  return op
}

function writeBlockHeader(out: Buffer, at: number, last: boolean, type: number, size: number): void {
  out.writeUIntLE(((size << 3) | (type << 1) | (last ? 1 : 0)) >>> 0, at, 3)
}

/**
 * A block body's bound: its literals, at most 5 header bytes, and per sequence (one per 4 input
 * bytes at most) no more than 8 bytes of codes and extra bits.
 */
const BODY_BOUND = BLOCK_MAX + 8 + (BLOCK_MAX / MIN_MATCH) * 8
let bodyScratch: Buffer | null = null

function compressFrame(src: Buffer, start: number, end: number, out: Buffer, op: number, seq: Sequences): number {
  const scratch = (bodyScratch ??= Buffer.allocUnsafe(BODY_BOUND))
  // A hash table sized to the input: small batches should not pay for clearing a large one.
  const hashLog = Math.min(HASH_LOG, Math.max(10, highBit(Math.max(1, end - start)) + 1))
  const table = (hashTable ??= new Int32Array(1 << HASH_LOG)).subarray(0, 1 << hashLog)
  table.fill(-1)
  op = writeFrameHeader(out, op, end - start)
  if (start === end) {
    writeBlockHeader(out, op, true, BLOCK_RAW, 0)
    return op + 3
  }
  for (let b = start; b < end; b += BLOCK_MAX) {
    const stop = Math.min(end, b + BLOCK_MAX)
    const last = stop === end
    const literalsEnd = findSequences(src, start, b, stop, table, 32 - hashLog, seq)
    const size = writeBlockBody(src, b, stop, seq, literalsEnd, scratch, 0)
    if (size < stop - b) {
      writeBlockHeader(out, op, last, BLOCK_COMPRESSED, size)
      scratch.copy(out, op + 3, 0, size)
      op += 3 + size
    } else {
      writeBlockHeader(out, op, last, BLOCK_RAW, stop - b)
      src.copy(out, op + 3, b, stop)
      op += 3 + stop - b
    }
  }
  return op
}

/** Compresses `src` into Zstandard frames (one per 128 MiB). */
export function zstdCompress(src: Buffer): Buffer {
  const n = src.length
  const frames = Math.max(1, Math.ceil(n / MAX_FRAME))
  // Frame headers of 9 bytes, then per block a 3-byte header and at most its input (else raw).
  const out = Buffer.allocUnsafe(frames * 9 + Math.max(1, Math.ceil(n / BLOCK_MAX)) * 3 + n)
  const seq = (sequences ??= {
    count: 0,
    lit: new Int32Array(BLOCK_MAX / MIN_MATCH + 1),
    match: new Int32Array(BLOCK_MAX / MIN_MATCH + 1),
    offset: new Int32Array(BLOCK_MAX / MIN_MATCH + 1),
  })
  let op = 0
  for (let f = 0; f < frames; f++) {
    const start = f * MAX_FRAME
    op = compressFrame(src, start, Math.min(n, start + MAX_FRAME), out, op, seq)
  }
  return out.subarray(0, op)
}
