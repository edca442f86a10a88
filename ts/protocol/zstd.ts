/**
 * Zstandard decompression (RFC 8878), written for ferrolog so that it is bounded: no input makes
 * it allocate or produce more than the caller allows, or loop without consuming input.
 *
 *   frame     magic 0xFD2FB528 LE | descriptor | [window] | [dict id] | [content size] | blocks | [checksum]
 *   block     header 3 bytes LE: last (bit 0), type (bits 1-2: raw, RLE, compressed), size (bits 3-23)
 *   compressed block = literals section (raw, RLE or Huffman with 1 or 4 streams) + sequences
 *   section (count, modes, FSE tables, one backward bitstream of (literals, match, offset) triples)
 *
 * Skippable frames (magic 0x184D2A5?) are stepped over; frames are concatenated. Before decoding,
 * the frames and block headers are walked: declared content sizes and raw and RLE blocks must fit
 * the limit before any work (an RLE bomb is refused at once), and a compressed block yields at
 * most min(window, 128 KiB), which bounds the output buffer: allocated once when every frame
 * declares its size, else grown as blocks need it, never past the limit. Compressed blocks are
 * decoded by zstd-block.ts. Dictionaries are not supported (Kafka uses none). The optional content checksum
 * (XXH64) is not verified: the batch's CRC-32C already covers the compressed bytes.
 */
import { type FrameState, decodeCompressedBlock } from './zstd-block.js'
import { zstdCorrupt as corrupt } from './zstd-entropy.js'
import { NO_PROGRESS, OutputLimitError, copyToSteps, runSteps, type Progress, type Steps } from './output-limit.js'

const ZSTD_MAGIC = 0xfd2fb528
const SKIPPABLE_MAGIC_MASK = 0xfffffff0
const SKIPPABLE_MAGIC = 0x184d2a50
const BLOCK_MAX = 128 * 1024
const MIN_WINDOW_LOG = 10
/** Refused above this, as zstd's own decoder does by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT). */
const MAX_WINDOW = 2 ** 27

const BLOCK_RAW = 0
const BLOCK_RLE = 1
const BLOCK_COMPRESSED = 2

interface FrameInfo {
  /** Where the first block header starts. */
  blocks: number
  blockMax: number
  contentSize: number
  hasChecksum: boolean
}

function readFrameHeader(src: Uint8Array, pos: number, end: number): FrameInfo {
  if (pos >= end) throw corrupt('truncated frame header')
  const fhd = src[pos++]!
  const fcsFlag = fhd >>> 6
  const singleSegment = (fhd >>> 5) & 1
  if (fhd & 0x08) throw corrupt('reserved frame header bit set')
  let window = 0
  if (!singleSegment) {
    if (pos >= end) throw corrupt('truncated frame header')
    const wd = src[pos++]!
    const base = 2 ** (MIN_WINDOW_LOG + (wd >>> 3))
    window = base + (base / 8) * (wd & 7)
  }
  const dictIdSize = [0, 1, 2, 4][fhd & 3]!
  const fcsSize = fcsFlag === 0 ? singleSegment : 1 << fcsFlag
  if (end - pos < dictIdSize + fcsSize) throw corrupt('truncated frame header')
  for (let i = 0; i < dictIdSize; i++) if (src[pos + i] !== 0) throw corrupt('dictionaries are not supported')
  pos += dictIdSize
  let contentSize = -1
  if (fcsSize > 0) {
    contentSize = 0
    for (let i = 0; i < fcsSize; i++) contentSize += src[pos + i]! * 2 ** (8 * i)
    if (fcsSize === 2) contentSize += 256
    pos += fcsSize
  }
  if (singleSegment) window = contentSize
  if (window > MAX_WINDOW) throw corrupt(`window of ${window} bytes is larger than supported`)
  return { blocks: pos, blockMax: Math.min(window, BLOCK_MAX), contentSize, hasChecksum: ((fhd >>> 2) & 1) === 1 }
}

/** What walking the frames and block headers tells of the output before decoding. */
interface OutputPlan {
  /** At least this much: declared content sizes, raw and RLE blocks. */
  lower: number
  /** At most this much: a compressed block yields at most its frame's block maximum. */
  upper: number
  /** Every frame declares its content size: the output is exactly `lower`. */
  exact: boolean
}

/** Walks frames and block headers, refusing anything that must exceed `maxOutput`. */
function planOutput(src: Uint8Array, maxOutput: number): OutputPlan {
  const end = src.length
  let lower = 0
  let upper = 0
  let exact = true
  let pos = 0
  if (end === 0) throw corrupt('empty input')
  while (pos < end) {
    if (end - pos < 4) throw corrupt('truncated frame')
    const magic = (src[pos]! | (src[pos + 1]! << 8) | (src[pos + 2]! << 16) | (src[pos + 3]! << 24)) >>> 0
    if ((magic & SKIPPABLE_MAGIC_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (end - pos < 8) throw corrupt('truncated skippable frame')
      const size = (src[pos + 4]! | (src[pos + 5]! << 8) | (src[pos + 6]! << 16) | (src[pos + 7]! << 24)) >>> 0
      if (size > end - pos - 8) throw corrupt('truncated skippable frame')
      pos += 8 + size
      continue
    }
    if (magic !== ZSTD_MAGIC) throw corrupt(`bad frame magic 0x${magic.toString(16)}`)
    const frame = readFrameHeader(src, pos + 4, end)
    if (frame.contentSize > maxOutput - lower) throw new OutputLimitError('zstd', maxOutput)
    pos = frame.blocks
    let frameLower = 0
    let frameUpper = 0
    for (let last = 0; !last;) {
      if (end - pos < 3) throw corrupt('truncated block header')
      const header = src[pos]! | (src[pos + 1]! << 8) | (src[pos + 2]! << 16)
      pos += 3
      last = header & 1
      const type = (header >>> 1) & 3
      const size = header >>> 3
      if (type === 3) throw corrupt('reserved block type')
      if (size > frame.blockMax) throw corrupt('block larger than the frame allows')
      const stored = type === BLOCK_RLE ? 1 : size
      if (end - pos < stored) throw corrupt('truncated block')
      pos += stored
      if (type === BLOCK_COMPRESSED) {
        frameUpper += frame.blockMax
      } else {
        frameLower += size
        frameUpper += size
        if (frameLower > maxOutput - lower) throw new OutputLimitError('zstd', maxOutput)
      }
    }
    if (frame.hasChecksum) {
      if (end - pos < 4) throw corrupt('truncated checksum')
      pos += 4
    }
    if (frame.contentSize >= 0) {
      if (frame.contentSize > frameUpper || frame.contentSize < frameLower) {
        throw corrupt(`content size ${frame.contentSize} does not fit the frame's blocks`)
      }
      lower += frame.contentSize
      upper += frame.contentSize
    } else {
      exact = false
      lower += frameLower
      upper += frameUpper
    }
  }
  return { lower, upper, exact }
}

/**
 * Decompresses Zstandard frames, refusing to produce more than `maxOutput` bytes; `progress`
 * sees the output after every block.
 */
export function zstdDecompress(src: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Buffer {
  return runSteps(zstdDecompressSteps(src, maxOutput, progress))
}

/** zstdDecompress one block at a time: it pauses (yields) after each block's `progress`. */
export function* zstdDecompressSteps(src: Buffer, maxOutput: number, progress: Progress = NO_PROGRESS): Steps<Buffer> {
  const plan = planOutput(src, maxOutput)
  // The output is allocated once when its size is known, else grown up to `cap` as blocks need.
  const cap = Math.min(plan.upper, maxOutput)
  let out: Buffer = Buffer.allocUnsafe(plan.exact ? plan.lower : Math.min(cap, Math.max(plan.lower + 4 * src.length, 64 * 1024)))
  const end = src.length
  let op = 0
  let pos = 0
  while (pos < end) {
    const magic = src.readUInt32LE(pos)
    if (magic !== ZSTD_MAGIC) {
      pos += 8 + src.readUInt32LE(pos + 4) // skippable (planOutput checked the rest)
      continue
    }
    const frame = readFrameHeader(src, pos + 4, end)
    pos = frame.blocks
    const f: FrameState = { huffman: null, ll: null, of: null, ml: null, rep1: 1, rep2: 4, rep3: 8, start: op }
    for (let last = 0; !last;) {
      const header = src[pos]! | (src[pos + 1]! << 8) | (src[pos + 2]! << 16)
      pos += 3
      last = header & 1
      const type = (header >>> 1) & 3
      const size = header >>> 3
      const want = Math.min(op + (type === BLOCK_COMPRESSED ? frame.blockMax : size), cap)
      if (want > out.length) out = yield* copyToSteps(out, op, Math.min(cap, Math.max(want, 2 * out.length)))
      if (type !== BLOCK_COMPRESSED && size > out.length - op) throw corrupt('frame larger than its content size')
      if (type === BLOCK_RAW) {
        src.copy(out, op, pos, pos + size)
        op += size
        pos += size
      } else if (type === BLOCK_RLE) {
        out.fill(src[pos]!, op, op + size)
        op += size
        pos += 1
      } else {
        const limit = Math.min(out.length, op + frame.blockMax)
        op = decodeCompressedBlock(src, pos, pos + size, out, op, limit, f, frame.blockMax)
        pos += size
      }
      progress(out, op)
      yield
    }
    if (frame.hasChecksum) pos += 4
    if (frame.contentSize >= 0 && op - f.start !== frame.contentSize) {
      throw corrupt(`frame yields ${op - f.start} bytes, announced ${frame.contentSize}`)
    }
  }
  // Do not keep a large allocation alive for a small result.
  return op < out.length >>> 1 ? yield* copyToSteps(out, op, op) : out.subarray(0, op)
}
