/**
 * The entropy coders of Zstandard (RFC 8878 section 4): FSE tables (read from their compact
 * description, or built from the predefined distributions) and Huffman tables (from weights that
 * are stored directly or FSE-compressed), plus the backward bitstreams both decode from.
 *
 * A backward bitstream `src[start, end)` is read from its end: the highest set bit of the last
 * byte marks where the data starts, and reading n bits takes the n bits just below the current
 * position (the first of them as the most significant). Positions here are absolute bit indexes
 * into `src` (bit i = bit i%8 of byte i/8); below `start * 8` a stream has overflowed.
 *
 * Every loop is bounded by its table or output size, so no input makes decoding run away.
 */
import { RecordError } from './record-error.js'

export function zstdCorrupt(why: string): RecordError {
  return new RecordError('CORRUPT_RECORD', `zstd: ${why}`)
}

// Literal and match length codes: baseline and extra bits (RFC 8878 3.1.1.3.2.1.1).
export const LL_BASE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
export const LL_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
export const ML_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, 4099,
  8195, 16387, 32771, 65539,
]
export const ML_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

// Predefined distributions of the sequence codes (RFC 8878 3.1.1.3.2.2): accuracy 6, 6, 5.
export const LL_DEFAULT_COUNTS = [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1]
export const ML_DEFAULT_COUNTS = [1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1]
export const OF_DEFAULT_COUNTS = [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1]

/** Bits `[p, p + n)` of `src` as a number (bit p least significant); n <= 25. */
export function bitsAt(src: Uint8Array, p: number, n: number): number {
  const i = p >>> 3
  const word = src[i]! | (src[i + 1]! << 8) | (src[i + 2]! << 16) | (src[i + 3]! << 24)
  return (word >>> (p & 7)) & ((1 << n) - 1)
}

/** Bits `[p, p + n)` for n up to 32. */
export function longBitsAt(src: Uint8Array, p: number, n: number): number {
  if (n <= 24) return bitsAt(src, p, n)
  return bitsAt(src, p, 24) + bitsAt(src, p + 24, n - 24) * 0x1000000
}

export function highBit(x: number): number {
  return 31 - Math.clz32(x)
}

/** The starting bit position of the backward stream `src[start, end)`. */
export function streamStart(src: Uint8Array, start: number, end: number): number {
  if (end <= start) throw zstdCorrupt('empty bitstream')
  const last = src[end - 1]!
  if (last === 0) throw zstdCorrupt('bitstream without an end mark')
  return (end - 1) * 8 + highBit(last)
}

/** An FSE decoding table of 2^log states. */
export interface FseTable {
  log: number
  symbol: Uint8Array
  nbBits: Uint8Array
  baseline: Uint16Array
}

/** Builds the decoding table of normalized `counts` (-1 = "less than one"), summing to 2^log. */
export function buildFseTable(counts: ArrayLike<number>, symbols: number, log: number): FseTable {
  const size = 1 << log
  const symbol = new Uint8Array(size)
  const nbBits = new Uint8Array(size)
  const baseline = new Uint16Array(size)
  const next = new Uint16Array(symbols)
  let high = size - 1
  for (let s = 0; s < symbols; s++) {
    if (counts[s] === -1) {
      symbol[high--] = s
      next[s] = 1
    } else {
      next[s] = counts[s]!
    }
  }
  const step = (size >>> 1) + (size >>> 3) + 3
  const mask = size - 1
  let position = 0
  for (let s = 0; s < symbols; s++) {
    for (let i = 0; i < counts[s]!; i++) {
      symbol[position] = s
      // The step is odd, so this visits every cell; the counts leave exactly high + 1 of them.
      do position = (position + step) & mask
      while (position > high)
    }
  }
  if (position !== 0) throw zstdCorrupt('FSE distribution does not fill its table')
  for (let u = 0; u < size; u++) {
    const ns = next[symbol[u]!]!++
    const nb = log - highBit(ns)
    nbBits[u] = nb
    baseline[u] = (ns << nb) - size
  }
  return { log, symbol, nbBits, baseline }
}

/** A table always decoding `symbol` without reading bits (RLE mode). */
export function rleFseTable(symbol: number): FseTable {
  return { log: 0, symbol: Uint8Array.of(symbol), nbBits: new Uint8Array(1), baseline: new Uint16Array(1) }
}

/**
 * Reads an FSE table description at `src[pos]` (RFC 8878 4.1.1), at most `maxLog` accuracy and
 * symbols up to `maxSymbol`; returns the table and the position after the description.
 */
export function readFseTable(src: Uint8Array, pos: number, end: number, maxLog: number, maxSymbol: number): { table: FseTable; pos: number } {
  if (pos >= end) throw zstdCorrupt('truncated FSE table')
  const log = (src[pos]! & 15) + 5
  if (log > maxLog) throw zstdCorrupt(`FSE accuracy log ${log} above ${maxLog}`)
  const limit = end * 8
  const counts = new Int16Array(maxSymbol + 1)
  let bp = pos * 8 + 4
  let remaining = (1 << log) + 1
  let threshold = 1 << log
  let nbBits = log + 1
  let sym = 0
  let previous0 = false
  while (remaining > 1 && sym <= maxSymbol) {
    if (previous0) {
      let n0 = sym
      for (;;) {
        if (bp + 2 > limit) throw zstdCorrupt('truncated FSE table')
        const r = bitsAt(src, bp, 2)
        bp += 2
        n0 += r
        if (r !== 3) break
        if (n0 > maxSymbol + 1) break
      }
      if (n0 > maxSymbol) throw zstdCorrupt('FSE table has too many symbols')
      while (sym < n0) counts[sym++] = 0
    }
    const max = 2 * threshold - 1 - remaining
    const v = bitsAt(src, bp, nbBits)
    let count: number
    if ((v & (threshold - 1)) < max) {
      count = v & (threshold - 1)
      bp += nbBits - 1
    } else {
      count = v & (2 * threshold - 1)
      if (count >= threshold) count -= max
      bp += nbBits
    }
    if (bp > limit) throw zstdCorrupt('truncated FSE table')
    count--
    remaining -= count < 0 ? -count : count
    counts[sym++] = count
    previous0 = count === 0
    while (remaining < threshold) {
      nbBits--
      threshold >>>= 1
    }
  }
  if (remaining !== 1) throw zstdCorrupt('FSE probabilities do not add up')
  return { table: buildFseTable(counts, sym, log), pos: (bp + 7) >>> 3 }
}

/** A Huffman decoding table of 2^log entries (symbol and code length per entry). */
export interface HuffmanTable {
  log: number
  symbol: Uint8Array
  nbBits: Uint8Array
}

const MAX_HUFFMAN_BITS = 11

/**
 * Reads a Huffman tree description at `src[pos]` (RFC 8878 4.2.1); returns the table and the
 * position after the description.
 */
export function readHuffmanTable(src: Uint8Array, pos: number, end: number): { table: HuffmanTable; pos: number } {
  if (pos >= end) throw zstdCorrupt('truncated Huffman tree')
  const header = src[pos++]!
  const weights = new Uint8Array(256)
  let count: number
  if (header < 128) {
    // FSE-compressed weights: two states share one table, read alternately from one stream.
    const stop = pos + header
    if (stop > end) throw zstdCorrupt('truncated Huffman tree')
    const { table, pos: streamAt } = readFseTable(src, pos, stop, 6, 255)
    const lower = streamAt * 8
    let bp = streamStart(src, streamAt, stop)
    const { symbol, nbBits, baseline, log } = table
    bp -= log
    if (bp < lower) throw zstdCorrupt('truncated Huffman weights')
    let s1 = bitsAt(src, bp, log)
    bp -= log
    if (bp < lower) throw zstdCorrupt('truncated Huffman weights')
    let s2 = bitsAt(src, bp, log)
    count = 0
    for (;;) {
      if (count >= 255) throw zstdCorrupt('too many Huffman weights')
      weights[count++] = symbol[s1]!
      bp -= nbBits[s1]!
      if (bp < lower) {
        weights[count++] = symbol[s2]!
        break
      }
      s1 = baseline[s1]! + bitsAt(src, bp, nbBits[s1]!)
      if (count >= 255) throw zstdCorrupt('too many Huffman weights')
      weights[count++] = symbol[s2]!
      bp -= nbBits[s2]!
      if (bp < lower) {
        weights[count++] = symbol[s1]!
        break
      }
      s2 = baseline[s2]! + bitsAt(src, bp, nbBits[s2]!)
    }
    pos = stop
  } else {
    count = header - 127
    const stop = pos + ((count + 1) >>> 1)
    if (stop > end) throw zstdCorrupt('truncated Huffman tree')
    for (let i = 0; i < count; i++) {
      const b = src[pos + (i >>> 1)]!
      weights[i] = i & 1 ? b & 15 : b >>> 4
    }
    pos = stop
  }
  if (count > 255) throw zstdCorrupt('too many Huffman weights')
  let total = 0
  for (let i = 0; i < count; i++) {
    const w = weights[i]!
    if (w > MAX_HUFFMAN_BITS) throw zstdCorrupt(`Huffman weight ${w} too large`)
    if (w) total += 1 << (w - 1)
  }
  if (total === 0) throw zstdCorrupt('Huffman tree without symbols')
  const log = highBit(total) + 1
  if (log > MAX_HUFFMAN_BITS) throw zstdCorrupt('Huffman codes too long')
  const rest = (1 << log) - total
  if (rest & (rest - 1)) throw zstdCorrupt('Huffman weights do not complete a tree')
  weights[count++] = highBit(rest) + 1
  // Entries by weight (shortest codes last), symbols in order within a weight.
  const rankStart = new Uint32Array(MAX_HUFFMAN_BITS + 2)
  for (let i = 0; i < count; i++) if (weights[i]) rankStart[weights[i]!]! += 1 << (weights[i]! - 1)
  let next = 0
  for (let w = 1; w <= log; w++) {
    const n = rankStart[w]!
    rankStart[w] = next
    next += n
  }
  const size = 1 << log
  const symbol = new Uint8Array(size)
  const nbBits = new Uint8Array(size)
  for (let s = 0; s < count; s++) {
    const w = weights[s]
    if (!w) continue
    const from = rankStart[w]!
    const to = from + (1 << (w - 1))
    symbol.fill(s, from, to)
    nbBits.fill(log + 1 - w, from, to)
    rankStart[w] = to
  }
  return { table: { log, symbol, nbBits }, pos }
}

/** Decodes `count` symbols of the Huffman stream `src[start, end)` into `out` at `op`. */
export function decodeHuffmanStream(src: Uint8Array, start: number, end: number, t: HuffmanTable, out: Uint8Array, op: number, count: number): void {
  const { log, symbol, nbBits } = t
  const lower = start * 8
  let bp = streamStart(src, start, end)
  const stop = op + count
  // Fast while a whole lookup's bits are there; then pad the last lookups with zeros.
  for (; op < stop && bp - log >= lower; op++) {
    const v = bitsAt(src, bp - log, log)
    out[op] = symbol[v]!
    bp -= nbBits[v]!
  }
  for (; op < stop; op++) {
    const have = bp - lower
    if (have <= 0 && bp < lower) throw zstdCorrupt('Huffman stream overflow')
    const v = have > 0 ? bitsAt(src, lower, have) << (log - have) : 0
    out[op] = symbol[v]!
    bp -= nbBits[v]!
    if (bp < lower) throw zstdCorrupt('Huffman stream overflow')
  }
  if (bp !== lower) throw zstdCorrupt('Huffman stream not fully consumed')
}
