/**
 * Kafka's NetworkReceive for a whole connection: cuts the bytes a socket reads into frames
 * (`size int32` + that many bytes) and hands each frame, without its size prefix, to `onFrame`.
 *
 * The socket reads into buffers this gives it (net's `onread` option), not into chunks of its
 * own that would then be copied together. Once a frame's size is known a buffer of that size is
 * allocated, and while at least DIRECT_READ_MIN bytes of it are missing the socket reads straight
 * into the rest of it: a 1 MiB Fetch response costs the kernel's copy and nothing more, and the
 * frame handed on (whose records fields the decoder keeps as views) is that buffer. Other reads go
 * to a 64 KiB scratch buffer, which may hold the end of one frame and several small ones; their
 * bytes are copied out of it, as it is reused by the next read.
 *
 * A size below 4 or above `maxFrameBytes` calls `onInvalid` once and ends the reading (the
 * connection is then closed by its owner).
 */
/** Below this many bytes left of a frame, the socket reads into the scratch buffer (maybe more frames at once). */
const DIRECT_READ_MIN = 16 * 1024
const SCRATCH_SIZE = 64 * 1024

/**
 * Cuts a connection's bytes into frames (`size int32` + that many bytes), reading big frames in
 * place; see the module's documentation. `onFrame` gets each frame without its size prefix.
 */
export class FrameReader {
  onFrame: (frame: Buffer) => void = () => undefined
  onInvalid: (size: number) => void = () => undefined
  private readonly maxFrameBytes: number
  private readonly scratch = Buffer.allocUnsafeSlow(SCRATCH_SIZE)
  /** The size prefix read so far (it may come split over reads). */
  private readonly sizeBytes = Buffer.alloc(4)
  private sizeFilled = 0
  /** The frame being read and how much of it is there. */
  private frame: Buffer | null = null
  private filled = 0
  private invalid = false

  constructor(maxFrameBytes: number) {
    this.maxFrameBytes = maxFrameBytes
  }

  /** The buffer the socket reads into next: the rest of a big frame, else the scratch. */
  nextBuffer(): Buffer {
    const frame = this.frame
    if (frame !== null && frame.length - this.filled >= DIRECT_READ_MIN) return frame.subarray(this.filled)
    return this.scratch
  }

  /** `n` bytes were read into the start of `buf` (a buffer nextBuffer gave). */
  onRead(n: number, buf: Buffer): void {
    if (this.invalid) return
    if (buf !== this.scratch) {
      this.filled += n
      this.maybeDeliver()
      return
    }
    let at = 0
    while (at < n && !this.invalid) {
      if (this.frame !== null) {
        const take = Math.min(n - at, this.frame.length - this.filled)
        buf.copy(this.frame, this.filled, at, at + take)
        this.filled += take
        at += take
        this.maybeDeliver()
        continue
      }
      if (this.sizeFilled === 0 && n - at >= 4) {
        const size = buf.readInt32BE(at)
        at += 4
        const frame = this.start(size)
        if (frame === null) return
        // A frame wholly in the scratch is copied out at once (the scratch is reused).
        if (n - at >= frame.length) {
          buf.copy(frame, 0, at, at + frame.length)
          at += frame.length
          this.filled = frame.length
          this.maybeDeliver()
        }
        continue
      }
      this.sizeBytes[this.sizeFilled++] = buf[at++]!
      if (this.sizeFilled === 4) {
        this.sizeFilled = 0
        if (this.start(this.sizeBytes.readInt32BE(0)) === null) return
      }
    }
  }

  /** The buffer of a frame of `size` bytes, now being read; null for a size out of bounds. */
  private start(size: number): Buffer | null {
    if (size < 4 || size > this.maxFrameBytes) {
      this.invalid = true
      this.onInvalid(size)
      return null
    }
    // Not from the shared pool: the frame lives as long as the records decoded from it.
    const frame = size > 4096 ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size)
    this.frame = frame
    this.filled = 0
    return frame
  }

  private maybeDeliver(): void {
    const frame = this.frame
    if (frame === null || this.filled < frame.length) return
    this.frame = null
    this.filled = 0
    this.onFrame(frame)
  }
}
