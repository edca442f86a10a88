/**
 * FrameReader (Kafka's NetworkReceive for a connection): frames come out whole and in order
 * however the socket's reads cut them (a size prefix split over reads, several frames in one
 * read, a big frame read in place into its own buffer), and a size out of bounds stops it.
 * The reads are driven as net's `onread` drives them: into the buffer `nextBuffer()` gives, then
 * `onRead(n, buffer)`; real sockets carry it in the consumer and network-client tests.
 */
import { describe, expect, it } from 'vitest'
import { FrameReader } from '../../ts/client/network-receive.js'

/** size int32 + `size` bytes, each byte a function of the frame number and its position. */
function frameBytes(k: number, size: number): Buffer {
  const b = Buffer.alloc(4 + size)
  b.writeInt32BE(size, 0)
  for (let i = 0; i < size; i++) b[4 + i] = (k * 31 + i * 7) & 0xff
  return b
}

/** Feeds `stream` to the reader in reads of at most the sizes `cut` returns, as a socket would. */
function feed(reader: FrameReader, stream: Buffer, cut: () => number): void {
  let at = 0
  while (at < stream.length) {
    const target = reader.nextBuffer()
    const n = Math.min(target.length, cut(), stream.length - at)
    stream.copy(target, 0, at, at + n)
    at += n
    reader.onRead(n, target)
  }
}

function prng(seed: number): () => number {
  let x = seed
  return () => ((x = (x * 1103515245 + 12345) >>> 0), x / 2 ** 32)
}

const SIZES = [4, 5, 100, 4095, 4097, 16_383, 20_000, 70_000, 1 << 20, 8, 3 << 20, 64 * 1024 - 4]

describe('FrameReader', () => {
  for (const [name, cut] of [
    ['one byte at a time', () => () => 1],
    ['reads of 3 bytes', () => () => 3],
    [
      'random reads up to 100 KiB',
      () => {
        const r = prng(7)
        return () => 1 + Math.floor(r() * 100_000)
      },
    ],
    ['reads as large as the buffer given', () => () => Number.MAX_SAFE_INTEGER],
  ] as const) {
    it(`hands out every frame whole and in order: ${name}`, () => {
      const sizes = name === 'one byte at a time' ? SIZES.filter((s) => s < 100_000) : SIZES
      const stream = Buffer.concat(sizes.map((s, k) => frameBytes(k, s)))
      const reader = new FrameReader(16 << 20)
      const frames: Buffer[] = []
      reader.onFrame = (f) => frames.push(Buffer.from(f))
      feed(reader, stream, cut())
      expect(frames.map((f) => f.length)).toEqual(sizes)
      frames.forEach((f, k) => expect(f.equals(frameBytes(k, sizes[k]).subarray(4))).toBe(true))
    })
  }

  it('reads a big frame in place: the frame handed out is one buffer of its size', () => {
    const reader = new FrameReader(16 << 20)
    const frames: Buffer[] = []
    reader.onFrame = (f) => frames.push(f)
    feed(reader, frameBytes(1, 1 << 20), () => 65_536)
    expect(frames).toHaveLength(1)
    expect(frames[0].byteOffset).toBe(0)
    expect(frames[0].buffer.byteLength).toBe(1 << 20)
    expect(frames[0].equals(frameBytes(1, 1 << 20).subarray(4))).toBe(true)
  })

  it('a frame size above the bound, or below 4, is reported once and ends the reading', () => {
    for (const bad of [(1 << 20) + 1, 3, -1]) {
      const reader = new FrameReader(1 << 20)
      const frames: Buffer[] = []
      const invalid: number[] = []
      reader.onFrame = (f) => frames.push(f)
      reader.onInvalid = (size) => invalid.push(size)
      const head = Buffer.alloc(4)
      head.writeInt32BE(bad, 0)
      feed(reader, Buffer.concat([frameBytes(0, 10), head, frameBytes(2, 10)]), () => 7)
      expect(frames.map((f) => f.length)).toEqual([10])
      expect(invalid).toEqual([bad])
    }
  })
})
