/**
 * Zstandard decompression through `fzstd` (a pure-JavaScript decoder), guarded so that no input
 * makes it allocate or produce more than the caller allows.
 *
 * Before decoding, the frames are walked (RFC 8878 section 3.1): frame header (magic 0xFD2FB528,
 * descriptor, window descriptor, dictionary id, content size), then block headers (3 bytes LE:
 * last flag, type raw / RLE / compressed / reserved, size), then the optional 4-byte checksum;
 * skippable frames (magic 0x184D2A5?) are stepped over. Raw and RLE blocks give their output
 * size, a compressed block produces at most min(window, 128 KiB): the sum bounds the output
 * exactly enough to refuse bombs before any work.
 *
 * fzstd allocates the declared window for a frame without a content size (2 MiB and more for
 * ordinary streams, up to 2 GiB for a hostile one); such a frame's window descriptor is lowered
 * in a copy to what its own output can need, which decodes the same bytes.
 */
import { decompress as fzstdDecompress } from 'fzstd'
import { StorageError } from '../storage/errors.js'

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

function corrupt(why: string, cause?: unknown): StorageError {
  return new StorageError('CORRUPT_RECORD', `zstd: ${why}`, cause === undefined ? undefined : { cause })
}

interface FramePlan {
  /** Upper bound of all frames' output. */
  bound: number
  /** Window descriptor bytes to lower: [position, new value] pairs. */
  patches: number[]
}

function walkFrames(src: Buffer, maxOutput: number): FramePlan {
  const end = src.length
  const patches: number[] = []
  let bound = 0
  let pos = 0
  if (end === 0) throw corrupt('empty input')
  while (pos < end) {
    if (end - pos < 4) throw corrupt('truncated frame')
    const magic = src.readUInt32LE(pos)
    if ((magic & SKIPPABLE_MAGIC_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (end - pos < 8) throw corrupt('truncated skippable frame')
      const size = src.readUInt32LE(pos + 4)
      if (size > end - pos - 8) throw corrupt('truncated skippable frame')
      pos += 8 + size
      continue
    }
    if (magic !== ZSTD_MAGIC) throw corrupt(`bad frame magic 0x${magic.toString(16)}`)
    pos += 4
    if (pos >= end) throw corrupt('truncated frame header')
    const fhd = src[pos++]
    const fcsFlag = fhd >>> 6
    const singleSegment = (fhd >>> 5) & 1
    const hasChecksum = (fhd >>> 2) & 1
    const dictIdFlag = fhd & 3
    if (fhd & 0x08) throw corrupt('reserved frame header bit set')
    let window = 0
    let windowAt = -1
    if (!singleSegment) {
      if (pos >= end) throw corrupt('truncated frame header')
      windowAt = pos
      const wd = src[pos++]
      const base = 2 ** (MIN_WINDOW_LOG + (wd >>> 3))
      window = base + (base / 8) * (wd & 7)
    }
    const dictIdSize = [0, 1, 2, 4][dictIdFlag]
    const fcsSize = fcsFlag === 0 ? singleSegment : 1 << fcsFlag
    if (end - pos < dictIdSize + fcsSize) throw corrupt('truncated frame header')
    let dictId = 0
    for (let i = 0; i < dictIdSize; i++) dictId += src[pos + i] * 2 ** (8 * i)
    if (dictId !== 0) throw corrupt('dictionaries are not supported')
    pos += dictIdSize
    let contentSize = -1
    if (fcsSize > 0) {
      contentSize = 0
      for (let i = 0; i < fcsSize; i++) contentSize += src[pos + i] * 2 ** (8 * i)
      if (fcsSize === 2) contentSize += 256
      pos += fcsSize
    }
    if (singleSegment) window = contentSize
    if (window > MAX_WINDOW) throw corrupt(`window of ${window} bytes is larger than supported`)
    const blockMax = Math.min(window, BLOCK_MAX)
    let frameBound = 0
    for (let last = 0; !last; ) {
      if (end - pos < 3) throw corrupt('truncated block header')
      const header = src[pos] | (src[pos + 1] << 8) | (src[pos + 2] << 16)
      pos += 3
      last = header & 1
      const type = (header >>> 1) & 3
      const size = header >>> 3
      if (type === BLOCK_RLE) {
        if (end - pos < 1) throw corrupt('truncated block')
        if (size > blockMax) throw corrupt('block larger than the frame allows')
        pos += 1
        frameBound += size
      } else if (type === BLOCK_RAW || type === BLOCK_COMPRESSED) {
        if (size > blockMax) throw corrupt('block larger than the frame allows')
        if (end - pos < size) throw corrupt('truncated block')
        pos += size
        frameBound += type === BLOCK_RAW ? size : blockMax
      } else {
        throw corrupt('reserved block type')
      }
      if (bound + frameBound > maxOutput) {
        throw corrupt(`output would exceed the limit of ${maxOutput} bytes`)
      }
    }
    if (hasChecksum) {
      if (end - pos < 4) throw corrupt('truncated checksum')
      pos += 4
    }
    if (contentSize > frameBound) throw corrupt(`content size ${contentSize} larger than the blocks can hold`)
    if (contentSize >= 0) frameBound = contentSize
    bound += frameBound
    if (contentSize < 0) {
      // The window only needs to cover this frame's output (and one block buffer).
      const need = Math.max(frameBound, blockMax, 2 ** MIN_WINDOW_LOG)
      const log = Math.ceil(Math.log2(need))
      if (2 ** log < window) patches.push(windowAt, (log - MIN_WINDOW_LOG) << 3)
    }
  }
  return { bound, patches }
}

/** Decompresses Zstandard frames, refusing to produce more than `maxOutput` bytes. */
export function zstdDecompress(src: Buffer, maxOutput: number): Buffer {
  const plan = walkFrames(src, maxOutput)
  let input: Uint8Array = src
  if (plan.patches.length > 0) {
    const copy = Buffer.from(src)
    for (let i = 0; i < plan.patches.length; i += 2) copy[plan.patches[i]] = plan.patches[i + 1]
    input = copy
  }
  let out: Uint8Array
  try {
    out = fzstdDecompress(input)
  } catch (err) {
    throw corrupt(`does not decode: ${(err as Error)?.message ?? String(err)}`, err)
  }
  if (out.length > plan.bound) throw corrupt('output larger than its blocks allow')
  return Buffer.from(out.buffer, out.byteOffset, out.length)
}
