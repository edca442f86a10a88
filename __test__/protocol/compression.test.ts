import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as zlib from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { COMPRESSION_TYPES, canCompress, compress, compressionId, compressionTypeOf, decompress } from '../../ts/protocol/compression.js'
import { lz4Compress, lz4Decompress } from '../../ts/protocol/lz4.js'
import { snappyCompress, snappyCompressRaw, snappyDecompress } from '../../ts/protocol/snappy.js'
import { xxh32 } from '../../ts/protocol/xxhash32.js'
import { zstdDecompress } from '../../ts/protocol/zstd.js'
import { zstdCompress } from '../../ts/protocol/zstd-encoder.js'
import type { CompressionType } from '../../ts/storage/types.js'
import { codecInput, expectRecordError, rng } from './helpers.js'

const CODECS = join(__dirname, 'fixtures', 'codecs')
const fixture = (name: string) => readFileSync(join(CODECS, name))
const MiB = 1024 * 1024

function randomBytes(n: number, seed: number): Buffer {
  const next = rng(seed)
  const b = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) b[i] = (next() * 256) | 0
  return b
}

const INPUTS: Array<[string, Buffer]> = [
  ['empty', Buffer.alloc(0)],
  ['one byte', Buffer.from('x')],
  ['13 bytes', Buffer.from('abcdabcdabcda')],
  ['short text', Buffer.from('hello hello hello hello hello world')],
  ['64 KiB of one byte', Buffer.alloc(64 * 1024, 7)],
  ['64 KiB + 1 of text', codecInput(3000).subarray(0, 64 * 1024 + 1)],
  ['text over several blocks', codecInput(3000)],
  ['random 100 KiB', randomBytes(100 * 1024, 1)],
  ['zeros 300 KiB', Buffer.alloc(300 * 1024)],
  ['mixed', Buffer.concat([randomBytes(5000, 2), Buffer.alloc(70000, 1), randomBytes(40000, 3), codecInput(500)])],
]

describe('codec ids', () => {
  it('maps attributes bits 0-2 to codecs and back', () => {
    expect(COMPRESSION_TYPES).toEqual(['none', 'gzip', 'snappy', 'lz4', 'zstd'])
    COMPRESSION_TYPES.forEach((t, id) => {
      expect(compressionId(t)).toBe(id)
      expect(compressionTypeOf(id | 0x18)).toBe(t)
    })
    for (const id of [5, 6, 7]) expectRecordError(() => compressionTypeOf(id), 'UNSUPPORTED_COMPRESSION', /codec id/)
    expectRecordError(() => compressionId('brotli' as CompressionType), 'UNSUPPORTED_COMPRESSION')
  })
})

describe('round trips', () => {
  for (const type of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    it(`${type}`, () => {
      expect(canCompress(type)).toBe(true)
      for (const [name, input] of INPUTS) {
        const packed = compress(type, input)
        expect(decompress(type, packed).equals(input), `${type} ${name}`).toBe(true)
      }
    })
  }

  it('compression actually compresses', () => {
    const input = codecInput(3000)
    for (const type of ['gzip', 'snappy', 'lz4', 'zstd'] as const) expect(compress(type, input).length).toBeLessThan(input.length / 2)
  })
})

describe('snappy', () => {
  it('writes snappy-java framing: magic, versions 1/1, 32 KiB chunks', () => {
    const out = snappyCompress(codecInput(3000))
    expect(out.subarray(0, 16).toString('hex')).toBe('82534e415050590000000001' + '00000001')
    // First chunk: length, then a raw block announcing 32768 bytes (varint 80 80 02).
    const len = out.readInt32BE(16)
    expect(out.subarray(20, 23).toString('hex')).toBe('808002')
    expect(len).toBeLessThan(32768)
  })

  it('reads what snappy-java wrote: raw block, 8 KiB chunks, concatenated streams', () => {
    const input = codecInput(3000)
    expect(snappyDecompress(fixture('input.raw.snappy'), MiB).equals(input)).toBe(true)
    expect(snappyDecompress(fixture('input.xerial-8k-chunks.snappy'), MiB).equals(input)).toBe(true)
    const both = Buffer.concat([codecInput(3), input])
    expect(snappyDecompress(fixture('small-then-input.xerial-concatenated.snappy'), MiB).equals(both)).toBe(true)
  })

  it('decodes a raw block that is not framed', () => {
    const input = codecInput(100)
    expect(decompress('snappy', snappyCompressRaw(input)).equals(input)).toBe(true)
  })

  it('refuses damage with CORRUPT_RECORD', () => {
    const good = snappyCompress(codecInput(300))
    expectRecordError(() => snappyDecompress(good.subarray(0, good.length - 3), MiB), 'CORRUPT_RECORD')
    expectRecordError(() => snappyDecompress(good.subarray(0, 18), MiB), 'CORRUPT_RECORD')
    // Raw block: length says 10, elements give 3.
    expectRecordError(() => snappyDecompress(Buffer.from('0a08616263', 'hex'), MiB), 'CORRUPT_RECORD', /announced/)
    // Copy reaching before the start of the output.
    expectRecordError(() => snappyDecompress(Buffer.from('0a0061' + '0d05', 'hex'), MiB), 'CORRUPT_RECORD', /offset/)
    // Negative chunk length.
    const bad = Buffer.from(good)
    bad.writeInt32BE(-5, 16)
    expectRecordError(() => snappyDecompress(bad, MiB), 'CORRUPT_RECORD', /chunk length/)
  })

  it('refuses bombs before allocating', () => {
    // A raw block announcing 4 GiB.
    expectRecordError(() => snappyDecompress(Buffer.from('ffffffff0f00', 'hex'), MiB), 'CORRUPT_RECORD', /limit/)
    const bomb = snappyCompress(Buffer.alloc(4 * MiB))
    expect(bomb.length).toBeLessThan(MiB / 2)
    expectRecordError(() => decompress('snappy', bomb, MiB), 'CORRUPT_RECORD', /limit/)
  })
})

describe('lz4', () => {
  it('xxHash32 matches the reference values', () => {
    expect(xxh32(Buffer.alloc(0))).toBe(0x02cc5d05)
    expect(xxh32(Buffer.from('abc'))).toBe(0x32d153ff)
    expect(xxh32(Buffer.from('Nobody inspects the spammish repetition'))).toBe(0xe2293b2f)
  })

  it('writes the frame Kafka writes: FLG 0x60, BD 0x40, header checksum, end mark', () => {
    const out = lz4Compress(Buffer.from('hello'))
    expect(out.subarray(0, 7).toString('hex')).toBe('04224d18' + '6040' + ((xxh32(Buffer.from([0x60, 0x40])) >>> 8) & 0xff).toString(16).padStart(2, '0'))
    expect(out.subarray(out.length - 4).toString('hex')).toBe('00000000')
    // Incompressible blocks are stored with the high bit set.
    expect(out.readUInt32LE(7)).toBe((0x80000000 | 5) >>> 0)
  })

  it('reads frames of the reference lz4 tool: dependent blocks, content size, both checksums', () => {
    const input = codecInput(3000)
    expect(lz4Decompress(fixture('input.dependent-blocks.content-size.checksums.lz4'), MiB).equals(input)).toBe(true)
    expect(lz4Decompress(fixture('input.independent.lz4'), MiB).equals(input)).toBe(true)
  })

  it('refuses damage with CORRUPT_RECORD', () => {
    const checked = fixture('input.dependent-blocks.content-size.checksums.lz4')
    const flipped = Buffer.from(checked)
    flipped[200] ^= 0x10
    expectRecordError(() => lz4Decompress(flipped, MiB), 'CORRUPT_RECORD', /checksum/)
    const hc = Buffer.from(checked)
    hc[14] ^= 1
    expectRecordError(() => lz4Decompress(hc, MiB), 'CORRUPT_RECORD', /descriptor checksum/)
    const good = lz4Compress(codecInput(300))
    expectRecordError(() => lz4Decompress(good.subarray(0, good.length - 10), MiB), 'CORRUPT_RECORD')
    expectRecordError(() => lz4Decompress(good.subarray(0, 5), MiB), 'CORRUPT_RECORD')
    const magic = Buffer.from(good)
    magic[0] = 0
    expectRecordError(() => lz4Decompress(magic, MiB), 'CORRUPT_RECORD', /magic/)
  })

  it('refuses bombs', () => {
    const bomb = lz4Compress(Buffer.alloc(4 * MiB))
    expect(bomb.length).toBeLessThan(64 * 1024)
    expectRecordError(() => decompress('lz4', bomb, MiB), 'CORRUPT_RECORD', /allowed/)
    expect(decompress('lz4', bomb, 4 * MiB).length).toBe(4 * MiB)
    // A content size over the limit is refused up front.
    const declared = Buffer.from(fixture('input.dependent-blocks.content-size.checksums.lz4'))
    expectRecordError(() => lz4Decompress(declared, 1000), 'CORRUPT_RECORD', /content size/)
  })
})

describe('zstd encoder (pure TypeScript)', () => {
  it('writes one single-segment frame with the content size and no checksum', () => {
    const small = zstdCompress(Buffer.from('hello hello hello hello'))
    expect(small.subarray(0, 6).toString('hex')).toBe('28b52ffd' + '20' + '17')
    const medium = zstdCompress(Buffer.alloc(1000, 1))
    expect(medium.subarray(4, 7).toString('hex')).toBe(
      '60' +
        (1000 - 256)
          .toString(16)
          .padStart(4, '0')
          .replace(/(..)(..)/, '$2$1'),
    )
    expect(zstdCompress(Buffer.alloc(0)).toString('hex')).toBe('28b52ffd' + '20' + '00' + '010000')
  })

  it('round-trips across blocks and stores incompressible blocks raw', () => {
    for (const [name, input] of INPUTS) {
      expect(zstdDecompress(zstdCompress(input), 4 * MiB).equals(input), name).toBe(true)
    }
    const random = randomBytes(300 * 1024, 9)
    expect(zstdCompress(random).length).toBeLessThan(random.length + 32)
    const zeros = zstdCompress(Buffer.alloc(2 * MiB))
    expect(zeros.length).toBeLessThan(500)
  })

  it('is read by the reference zstd tool (Debian zstd, installed by .ci/run)', () => {
    for (const [name, input] of INPUTS) {
      const out = execFileSync('zstd', ['-q', '-d', '-c'], { input: zstdCompress(input), maxBuffer: 64 * MiB })
      expect(out.equals(input), name).toBe(true)
    }
  })
})

describe('zstd', () => {
  it('reads frames of the reference zstd tool: content size + checksum, streamed, two frames', () => {
    const input = codecInput(3000)
    expect(zstdDecompress(fixture('input.fcs-checksum.zst'), MiB).equals(input)).toBe(true)
    expect(zstdDecompress(fixture('input.streamed.zst'), MiB).equals(input)).toBe(true)
    const both = Buffer.concat([codecInput(3), input])
    expect(decompress('zstd', fixture('small-then-input.two-frames.zst'), MiB).equals(both)).toBe(true)
  })

  it('reads many blocks (tables and Huffman trees repeated across blocks)', () => {
    const input = codecInput(15000)
    expect(input.length).toBeGreaterThan(2 * 128 * 1024)
    expect(zstdDecompress(fixture('input-15000-lines.streamed.zst'), MiB).equals(input)).toBe(true)
  })

  it('refuses a Huffman description whose weights never end (a decoder loop, not a bomb)', () => {
    // A mutated Kafka zstd batch on which a pure-JavaScript decoder used to loop forever.
    expectRecordError(() => zstdDecompress(fixture('huffman-weights-never-end.zst'), MiB), 'CORRUPT_RECORD', /Huffman/)
  })

  it('steps over skippable frames', () => {
    const skippable = Buffer.from('502a4d18' + '03000000' + 'aabbcc', 'hex')
    const input = codecInput(3000)
    expect(zstdDecompress(Buffer.concat([skippable, fixture('input.streamed.zst')]), MiB).equals(input)).toBe(true)
  })

  it('refuses damage with CORRUPT_RECORD', () => {
    const good = fixture('input.streamed.zst')
    expectRecordError(() => zstdDecompress(good.subarray(0, good.length - 7), MiB), 'CORRUPT_RECORD', /truncated/)
    expectRecordError(() => zstdDecompress(Buffer.from('not zstd at all'), MiB), 'CORRUPT_RECORD', /magic/)
    expectRecordError(() => zstdDecompress(Buffer.alloc(0), MiB), 'CORRUPT_RECORD')
    const next = rng(3)
    for (let i = 0; i < 200; i++) {
      const bad = Buffer.from(good)
      for (let k = 0; k < 3; k++) bad[6 + Math.floor(next() * (bad.length - 6))] ^= 1 << Math.floor(next() * 8)
      try {
        zstdDecompress(bad, MiB)
      } catch (err) {
        expect((err as { code?: string }).code).toBe('CORRUPT_RECORD')
      }
    }
  })

  it('refuses bombs before decoding', () => {
    // 1000 RLE blocks of 128 KiB each (125 MiB) in 4 KiB of input.
    const blocks = 1000
    const frame = Buffer.alloc(6 + 4 * blocks)
    frame.writeUInt32LE(0xfd2fb528, 0)
    frame[4] = 0x00 // no content size, window descriptor follows
    frame[5] = (17 - 10) << 3 // 128 KiB window
    for (let i = 0; i < blocks; i++) {
      const header = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0)
      frame.writeUIntLE(header, 6 + 4 * i, 3)
      frame[6 + 4 * i + 3] = 0x61
    }
    expectRecordError(() => decompress('zstd', frame, MiB), 'CORRUPT_RECORD', /limit/)
    // A frame declaring a huge content size.
    const declared = Buffer.from('28b52ffd' + 'c0' + '38' + '0000000001000000' + '090000' + '61', 'hex')
    expectRecordError(() => zstdDecompress(declared, MiB), 'CORRUPT_RECORD', /limit/)
    const lying = Buffer.from('28b52ffd' + 'c0' + '38' + 'e803000000000000' + '090000' + '61', 'hex')
    expectRecordError(() => zstdDecompress(lying, MiB), 'CORRUPT_RECORD', /content size 1000/)
    const single = Buffer.from('28b52ffd' + 'e0' + '0000000001000000' + '090000' + '61', 'hex')
    expectRecordError(() => zstdDecompress(single, MiB), 'CORRUPT_RECORD', /window/)
    // A window too large to be honest.
    const window = Buffer.from('28b52ffd' + '00' + 'f8' + '010000', 'hex')
    expectRecordError(() => zstdDecompress(window, MiB), 'CORRUPT_RECORD', /window/)
  })
})

describe('gzip', () => {
  it('reads streams of other encoders (levels, concatenated members)', () => {
    const input = codecInput(3000)
    expect(decompress('gzip', zlib.gzipSync(input, { level: 9 })).equals(input)).toBe(true)
    const two = Buffer.concat([zlib.gzipSync(input.subarray(0, 1000)), zlib.gzipSync(input.subarray(1000))])
    expect(decompress('gzip', two).equals(input)).toBe(true)
  })

  it('refuses damage and bombs with CORRUPT_RECORD', () => {
    const good = zlib.gzipSync(codecInput(300))
    expectRecordError(() => decompress('gzip', good.subarray(0, good.length - 5)), 'CORRUPT_RECORD', /gzip/)
    expectRecordError(() => decompress('gzip', Buffer.from('not gzip')), 'CORRUPT_RECORD', /gzip/)
    const bomb = zlib.gzipSync(Buffer.alloc(8 * MiB))
    expectRecordError(() => decompress('gzip', bomb, MiB), 'CORRUPT_RECORD', /limit/)
  })

  it('bounds uncompressed records too', () => {
    expectRecordError(() => decompress('none', Buffer.alloc(100), 10), 'CORRUPT_RECORD', /limit/)
  })
})
